// @no-services
/**
 * The UI's API shapes are declared once, on the server, in zod: `ui/api/<area>.ts` is the only
 * place that calls the API, and it takes its types from the server's schemas. A source scan:
 * a page that calls the API itself, or declares a type whose fields copy an API object, fails.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { ROUTES } from "../src/routes.ts";

const ROOT = join(import.meta.dir, "..");
const UI = join(ROOT, "ui");

/** The stream readers (SQL rows, the audit and alert feeds) and the session's transport (`api`, login). */
const MAY_FETCH = new Set(["ui/session.ts", "ui/sse.ts"]);

/**
 * Files that still declare a type copying an API object: the SQL stream reader's record
 * (ui/stream.ts, over ui/sse.ts). The list only shrinks: a file that no longer needs its place
 * here fails the test until it is removed.
 */
const DECLARES_API_TYPES_TODAY = new Set(["ui/stream.ts"]);

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sources(path);
    return /\.tsx?$/.test(e.name) && !e.name.endsWith(".d.ts") ? [path] : [];
  });
}

const files = sources(UI).map((path) => ({ name: relative(ROOT, path).replaceAll("\\", "/"), text: readFileSync(path, "utf8") }));
const inApiFolder = (name: string) => name.startsWith("ui/api/");

/** Comments and string contents blanked, so that words in them are not read as code. */
function code(text: string): string {
  return text
    .replace(/\/\*[\s\S]*?\*\//g, (m) => m.replace(/[^\n]/g, " "))
    .replace(/(^|[^:])\/\/.*$/gm, (m, p: string) => p + " ".repeat(m.length - p.length));
}

// ---------------------------------------------------------------------------------------------
// The objects of the API: every object schema reachable from a declared route's body and answers.
// (Query strings are text on the wire: the UI's typed form of one is no copy of a JSON shape.)

type Shape = { route: string; keys: Set<string> };

function objectsOf(schema: unknown, route: string, out: Shape[], seen = new Set<unknown>()): void {
  if (!schema || typeof schema !== "object" || seen.has(schema)) return;
  seen.add(schema);
  const def = (schema as { _zod?: { def?: Record<string, unknown> } })._zod?.def;
  if (!def) return;
  if (def.type === "object") {
    const shape = def.shape as Record<string, unknown>;
    out.push({ route, keys: new Set(Object.keys(shape)) });
    for (const v of Object.values(shape)) objectsOf(v, route, out, seen);
    return;
  }
  for (const v of Object.values(def)) {
    if (Array.isArray(v)) for (const x of v) objectsOf(x, route, out, seen);
    else objectsOf(v, route, out, seen);
  }
}

const apiObjects: Shape[] = [];
for (const r of ROUTES) {
  const name = `${r.access.method} ${r.access.path}`;
  objectsOf(r.schemas.body, name, apiObjects);
  for (const answer of Object.values(r.doc.responses ?? {})) {
    const content = (answer as { content?: Record<string, { schema?: unknown }> }).content ?? {};
    for (const media of Object.values(content)) objectsOf(media.schema, name, apiObjects);
  }
}

/** Top-level member names of each `interface X {...}` and `type X = {...}` in a file. */
function declaredTypes(text: string): Array<{ name: string; fields: string[] }> {
  const src = code(text);
  const out: Array<{ name: string; fields: string[] }> = [];
  for (const m of src.matchAll(/\b(?:interface\s+(\w+)(?:<[^>{]*>)?(?:\s+extends\s+[^{]+)?|type\s+(\w+)(?:<[^>=]*>)?\s*=)\s*\{/g)) {
    let depth = 1;
    let i = m.index + m[0].length;
    const start = i;
    while (i < src.length && depth > 0) {
      if (src[i] === "{") depth++;
      else if (src[i] === "}") depth--;
      i++;
    }
    const body = src.slice(start, i - 1);
    // Members at the body's own depth only.
    let level = 0;
    let flat = "";
    for (const ch of body) {
      if (ch === "{" || ch === "(" || ch === "[" || ch === "<") level++;
      if (level === 0) flat += ch;
      if (ch === "}" || ch === ")" || ch === "]" || ch === ">") level--;
    }
    const fields = [...flat.matchAll(/(?:^|[;,\n])\s*(?:readonly\s+)?(?:"([^"]+)"|(\w+))\??\s*:/g)].map((f) => (f[1] ?? f[2]) as string);
    out.push({ name: (m[1] ?? m[2]) as string, fields });
  }
  return out;
}

/** The API object a hand-declared type copies: three or more fields, all an API object's, at least half of its fields. */
function copiedApiObject(fields: string[]): Shape | undefined {
  if (fields.length < 3) return undefined;
  return apiObjects.find((o) => fields.every((f) => o.keys.has(f)) && fields.length * 2 >= o.keys.size);
}

function handDeclaredApiTypes(text: string): string[] {
  return declaredTypes(text).flatMap((t) => {
    const copied = copiedApiObject(t.fields);
    return copied ? [`${t.name} {${t.fields.join(", ")}} copies an object of ${copied.route}`] : [];
  });
}

const callsFetch = (text: string) => /(?<![\w.])fetch\s*\(/.test(code(text));
const callsApi = (text: string) => /(?<![\w.])api\s*(?:<|\()/.test(code(text));

describe("24.api: the UI's API shapes are the server's", () => {
  test("24.api.1: fetch is called only in ui/api/, the session's transport and the stream readers", () => {
    const offenders = files.filter((f) => !inApiFolder(f.name) && !MAY_FETCH.has(f.name) && callsFetch(f.text)).map((f) => f.name);
    expect(offenders).toEqual([]);
  });

  test("24.api.2: only ui/api/ calls the API", () => {
    const calling = files.filter((f) => !inApiFolder(f.name) && f.name !== "ui/session.ts" && callsApi(f.text)).map((f) => f.name);
    expect(calling).toEqual([]);
  });

  test("24.api.3: no file in ui/ declares an API type by hand (it imports the server's)", () => {
    const found = files.flatMap((f) => handDeclaredApiTypes(f.text).map((t) => ({ file: f.name, type: t })));
    expect(found.filter((x) => !DECLARES_API_TYPES_TODAY.has(x.file)).map((x) => `${x.file}: ${x.type}`)).toEqual([]);
    const stillDeclaring = new Set(found.map((x) => x.file));
    expect([...DECLARES_API_TYPES_TODAY].filter((name) => !stillDeclaring.has(name))).toEqual([]);
  });

  test("24.api.4: an inline object type is no answer type (api<{...}> copies the server's shape)", () => {
    const offenders = files.filter((f) => /(?<![\w.])api\s*<\s*\{/.test(code(f.text))).map((f) => f.name);
    expect(offenders).toEqual([]);
  });

  test("24.api.5: the scan recognises a hand copy (a page's GroupSummary of the consumer group list)", () => {
    const page = "interface GroupSummary {\n  id: string;\n  state: string;\n  members: number;\n  topics: string[];\n  lag: number;\n}\n";
    expect(handDeclaredApiTypes(page)).toHaveLength(1);
    expect(callsFetch('const r = await fetch("/api/topics");')).toBe(true);
    expect(callsFetch("// fetch(x) in a comment")).toBe(false);
    expect(callsApi("queryFn: () => api<Topic[]>(`/api/topics`)")).toBe(true);
  });
});
