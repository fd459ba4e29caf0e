// @no-services
/**
 * The architecture, enforced: the layer order of src/ (a module imports only from its own layer
 * or the ones below), no import cycle between files of src/ or ui/ nor between src/'s folders,
 * what ui/ may take from src/ (the browser gets no parser, evaluator or server code), and a ceiling
 * on the length of a function in src/ with the functions over it today listed by name.
 *
 * Imports are read with TypeScript's own parser: static imports and re-exports, `import("...")`
 * in types and dynamic `import()` calls. Type-only imports count for cycles and layers (a type
 * is a dependency of the design even when the bundler drops it); ui/ may import any type of src/.
 * docs/architecture.md carries the same layer table (checked below), so the doc cannot drift.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";

const ROOT = resolve(import.meta.dir, "..");

/**
 * The layers of src/, lowest first: a module may import from its own layer and those below,
 * never from one above. A path ending in "/" is a folder, else a file.
 */
const LAYERS: readonly (readonly string[])[] = [
  ["src/util/", "src/errors.ts", "src/version.ts", "src/types.d.ts"],
  ["src/log/"],
  ["src/config/"],
  ["src/db/"],
  ["src/kafka/", "src/registry/", "src/proxy/"],
  ["src/sql/"],
  ["src/engine/"],
  ["src/lag/"],
  ["src/http/"],
  ["src/domains/", "src/ui/"],
  ["src/areas.ts", "src/routes.ts", "src/app.ts", "src/compose.ts", "src/main.ts"],
];

/** What each layer is, for the doc's table and the failure messages. */
const LAYER_NAMES = [
  "utilities, AppError, the version",
  "the logger",
  "the config file's schema and loading",
  "the store (Kysely on SQLite or PostgreSQL, migrations)",
  "clients of outside services (Kafka, the schema registry, proxied upstreams)",
  "the SQL language (lexer, parser, analyzer, planner, evaluator)",
  "the query engine",
  "the lag engine and sampler",
  "HTTP: routes, access check, streams; imports no domain, takes ports",
  "the areas (domains) and the UI's route",
  "the list of areas, the composition root and the command line",
];

/**
 * The modules of src/ that ui/ may import values from: pure word lists, schemas and small pure
 * helpers, written for the browser. Anything else of src/ only as `import type`. None of the
 * dialect's lexer, parser, analyzer or evaluator: the server tells the editor what they read
 * (test/ui/bundle.test.ts checks the bundle built).
 */
const UI_MAY_IMPORT = new Set([
  "src/config/groups.ts",
  "src/config/values.ts",
  "src/domains/audit/types.ts",
  // The request schemas the UI's forms check with (zod only).
  "src/domains/access/group-schemas.ts",
  "src/domains/acls/schemas.ts",
  "src/domains/alerts/schemas.ts",
  "src/domains/connect/schemas.ts",
  "src/domains/kafka-users/schemas.ts",
  "src/domains/metadata/schemas.ts",
  "src/domains/processors/schemas.ts",
  "src/domains/quotas/schemas.ts",
  "src/domains/quotas/targets.ts",
  "src/domains/schemas/schemas.ts",
  "src/domains/service-accounts/schemas.ts",
  "src/domains/shared/list-query.ts",
  "src/domains/shared/schemas.ts",
  "src/domains/shared/topic-types.ts",
  "src/domains/topics/names.ts",
  "src/domains/topics/schemas.ts",
  "src/domains/users/schemas.ts",
  "src/http/audit-trail.ts",
  "src/sql/ast.ts",
  "src/sql/errors.ts",
  "src/sql/limits.ts",
  "src/sql/lookup.ts",
  "src/sql/reserved.ts",
  "src/sql/settings.ts",
  "src/sql/stream-settings.ts",
  "src/sql/stream-vocabulary.ts",
  "src/sql/vocabulary.ts",
]);

/** Where HTTP is spoken: src/http/ and the layers above it. */
const HTTP_AND_UP = LAYERS.slice(LAYERS.findIndex((entries) => entries.includes("src/http/"))).flat();

/** Packages only some folders may import: the Kafka client lives in src/kafka/ alone, the database drivers in src/db/. */
const PACKAGE_HOMES: Record<string, readonly string[]> = {
  "@platformatic/kafka": ["src/kafka/"],
  pg: ["src/db/"],
  "bun:sqlite": ["src/db/"],
  hono: HTTP_AND_UP,
  "@hono/zod-openapi": HTTP_AND_UP,
};

/** Longest function in src/, in lines from its first to its last (nested functions count in the outer one). */
const FUNCTION_CEILING = 80;

/**
 * The functions of src/ over the ceiling, by `file#name`, with their length when listed: none
 * may grow, and each is removed from here once it is split (the test fails while a listed one
 * is under the ceiling or gone). Nothing is added.
 */
const LONG_FUNCTIONS: Record<string, number> = {
  "src/app.ts#createApp": 147,
  "src/compose.ts#buildRuntime": 210,
  "src/domains/auth/service.ts#AuthService.login": 92,
  "src/domains/connect/routes.ts#connectRoutes": 350,
  "src/domains/schemas/routes.ts#schemaRoutes": 254,
  "src/domains/topics/browse-records.ts#RecordBrowser.#browse": 132,
  "src/domains/topics/routes.ts#topicRoutes": 139,
  "src/engine/encoders.ts#toAvro": 91,
  "src/engine/prefilter.ts#buildPrefilter": 111,
  "src/http/sse.ts#sseStream": 167,
  "src/kafka/record-set.ts#decodeRecordSet": 106,
  "src/sql/evaluator.ts#compile": 147,
  "src/sql/stream-analyzer.ts#StreamAnalyzer.run": 107,
};

// ---------------------------------------------------------------------------------------------

interface Import {
  from: string;
  /** The file imported (relative to the root), or the package name. */
  to: string;
  line: number;
  typeOnly: boolean;
  external: boolean;
}

interface FunctionSpan {
  key: string;
  lines: number;
  line: number;
}

function walk(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path, out);
    else if (/\.tsx?$/.test(name)) out.push(path);
  }
  return out;
}

function resolveImport(fromFile: string, spec: string): string {
  const base = resolve(dirname(fromFile), spec);
  for (const candidate of [base, `${base}.ts`, `${base}.tsx`, join(base, "index.ts")])
    if (existsSync(candidate) && statSync(candidate).isFile()) return relative(ROOT, candidate);
  return relative(ROOT, base);
}

function packageName(spec: string): string {
  const parts = spec.split("/");
  return spec.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]!;
}

/** Whether a named import list holds types only (`import { type A, type B }`), which the bundler drops. */
function typeOnlyClause(clause: ts.ImportClause | undefined): boolean {
  if (!clause) return false;
  if (clause.isTypeOnly) return true;
  const named = clause.namedBindings;
  return !clause.name && !!named && ts.isNamedImports(named) && named.elements.length > 0 && named.elements.every((e) => e.isTypeOnly);
}

function nameOf(node: ts.Node, file: ts.SourceFile): string | undefined {
  const named = node as { name?: ts.Node };
  if (named.name && (ts.isIdentifier(named.name) || ts.isPrivateIdentifier(named.name) || ts.isStringLiteral(named.name)))
    return named.name.text;
  if (ts.isConstructorDeclaration(node)) return "constructor";
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent))
    return parent.name.getText(file);
  return undefined;
}

const isFunctionLike = (n: ts.Node) =>
  ts.isFunctionDeclaration(n) ||
  ts.isFunctionExpression(n) ||
  ts.isArrowFunction(n) ||
  ts.isMethodDeclaration(n) ||
  ts.isConstructorDeclaration(n) ||
  ts.isGetAccessorDeclaration(n) ||
  ts.isSetAccessorDeclaration(n);

function scan(path: string): { imports: Import[]; functions: FunctionSpan[] } {
  const from = relative(ROOT, path);
  const text = readFileSync(path, "utf8");
  const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, path.endsWith(".tsx") ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const imports: Import[] = [];
  const functions: FunctionSpan[] = [];
  const lineOf = (pos: number) => file.getLineAndCharacterOfPosition(pos).line + 1;
  const add = (spec: string, node: ts.Node, typeOnly: boolean) => {
    const external = !spec.startsWith(".");
    imports.push({
      from,
      to: external ? packageName(spec) : resolveImport(path, spec),
      line: lineOf(node.getStart(file)),
      typeOnly,
      external,
    });
  };
  const visit = (node: ts.Node, outer: string[]) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      add(node.moduleSpecifier.text, node, typeOnlyClause(node.importClause));
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      add(node.moduleSpecifier.text, node, node.isTypeOnly);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      add(node.argument.literal.text, node, true);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const arg = node.arguments[0];
      if (arg && ts.isStringLiteralLike(arg)) add(arg.text, node, false);
    }
    let inner = outer;
    if (ts.isClassDeclaration(node) || ts.isClassExpression(node)) inner = [...outer, node.name?.text ?? "(class)"];
    else if (isFunctionLike(node)) {
      inner = [...outer, nameOf(node, file) ?? "(anonymous)"];
      const first = lineOf(node.getStart(file));
      functions.push({ key: `${from}#${inner.join(".")}`, lines: lineOf(node.getEnd()) - first + 1, line: first });
    }
    ts.forEachChild(node, (child) => visit(child, inner));
  };
  visit(file, []);
  return { imports, functions };
}

const files = [...walk(join(ROOT, "src")), ...walk(join(ROOT, "ui"))];
const scanned = files.map(scan);
const imports = scanned.flatMap((s) => s.imports);
const local = imports.filter((i) => !i.external && /\.tsx?$/.test(i.to));
const srcFunctions = scanned.flatMap((s) => s.functions).filter((f) => f.key.startsWith("src/"));

const covers = (entry: string, path: string) => (entry.endsWith("/") ? path.startsWith(entry) : path === entry);

function layerOf(path: string): number | undefined {
  const i = LAYERS.findIndex((entries) => entries.some((e) => covers(e, path)));
  return i < 0 ? undefined : i + 1;
}

/** The import loops of a graph: one per strongly connected group of more than one node (Tarjan), the shortest through its first node. */
function cycles(edges: Iterable<[string, string]>): string[] {
  const next = new Map<string, Set<string>>();
  for (const [a, b] of edges) {
    if (a === b) continue;
    if (!next.has(a)) next.set(a, new Set());
    if (!next.has(b)) next.set(b, new Set());
    next.get(a)!.add(b);
  }
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const connect = (v: string) => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const group: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        group.push(w);
      } while (w !== v);
      if (group.length > 1) found.push(group.sort());
    }
  };
  for (const v of [...next.keys()].sort()) if (!index.has(v)) connect(v);
  return found.map((group) => {
    const inGroup = new Set(group);
    const start = group[0]!;
    const previous = new Map<string, string>();
    const queue = [start];
    for (let i = 0; i < queue.length; i++) {
      for (const w of next.get(queue[i]!) ?? []) {
        if (!inGroup.has(w) || previous.has(w)) continue;
        previous.set(w, queue[i]!);
        if (w === start) break;
        queue.push(w);
      }
      if (previous.has(start)) break;
    }
    const loop = [start];
    for (let at = previous.get(start)!; at !== start; at = previous.get(at)!) loop.unshift(at);
    return `${[start, ...loop].join(" -> ")}${group.length > loop.length ? ` (one loop of ${group.join(", ")})` : ""}`;
  });
}

/** A folder of src/ as a node of the folder graph: each domain on its own, else the top folder (or the top-level file). */
function folderOf(path: string): string {
  const parts = path.split("/");
  if (parts[1] === "domains" && parts.length > 3) return parts.slice(0, 3).join("/");
  return parts.length > 2 ? `${parts.slice(0, 2).join("/")}/` : path;
}

const at = (i: Import) => `${i.from}:${i.line}`;

describe("architecture", () => {
  test("every file of src/ has a layer", () => {
    const missing = files.map((f) => relative(ROOT, f)).filter((f) => f.startsWith("src/") && layerOf(f) === undefined);
    expect(missing).toEqual([]);
  });

  test("src/ imports only from its own layer or below, and nothing outside src/", () => {
    const wrong: string[] = [];
    for (const i of local) {
      if (!i.from.startsWith("src/")) continue;
      if (!i.to.startsWith("src/")) {
        wrong.push(`${at(i)} imports ${i.to}, outside src/`);
        continue;
      }
      const from = layerOf(i.from)!;
      const to = layerOf(i.to)!;
      if (to > from) wrong.push(`${at(i)} (layer ${from}) imports ${i.to} (layer ${to}): a layer imports only from itself and those below`);
    }
    expect(wrong).toEqual([]);
  });

  test("packages are imported only where they belong", () => {
    const wrong: string[] = [];
    for (const i of imports) {
      if (!i.external) continue;
      const homes = PACKAGE_HOMES[i.to];
      if (homes && !homes.some((h) => covers(h, i.from))) wrong.push(`${at(i)} imports ${i.to} (only ${homes.join(", ")})`);
      if (i.from.startsWith("ui/") && /^(node|bun):|^bun$/.test(i.to)) wrong.push(`${at(i)} imports ${i.to}, which no browser has`);
    }
    expect(wrong).toEqual([]);
  });

  test("ui/ imports from src/ only what is meant for the browser, or types", () => {
    const wrong: string[] = [];
    for (const i of local)
      if (i.from.startsWith("ui/") && !i.to.startsWith("ui/") && !i.typeOnly && !UI_MAY_IMPORT.has(i.to))
        wrong.push(`${at(i)} imports ${i.to}: not for the browser (UI_MAY_IMPORT lists what is; types are always fine)`);
    // What the allowed modules import at run time comes along into the bundle: it must be allowed too.
    for (const i of local)
      if (UI_MAY_IMPORT.has(i.from) && !i.typeOnly && !UI_MAY_IMPORT.has(i.to))
        wrong.push(`${at(i)} imports ${i.to}, which would come into the browser bundle`);
    expect(wrong).toEqual([]);
  });

  test("no import cycle between files of src/ or ui/", () => {
    const found = cycles(local.map((i) => [i.from, i.to]));
    expect(found).toEqual([]);
  });

  test("no import cycle between the folders of src/ (each domain on its own)", () => {
    const edges: [string, string][] = local.filter((i) => i.from.startsWith("src/")).map((i) => [folderOf(i.from), folderOf(i.to)]);
    expect(cycles(edges)).toEqual([]);
  });

  test(`no function in src/ is longer than ${FUNCTION_CEILING} lines, but those listed today (which may only shrink)`, () => {
    const wrong: string[] = [];
    const seen = new Set<string>();
    for (const f of srcFunctions) {
      const listed = LONG_FUNCTIONS[f.key];
      if (listed !== undefined) {
        seen.add(f.key);
        if (f.lines > listed) wrong.push(`${f.key} (line ${f.line}) grew to ${f.lines} lines (listed at ${listed}): split it`);
        else if (f.lines <= FUNCTION_CEILING)
          wrong.push(`${f.key} is ${f.lines} lines now, under the ceiling: remove it from LONG_FUNCTIONS`);
      } else if (f.lines > FUNCTION_CEILING) {
        wrong.push(`${f.key} (line ${f.line}) is ${f.lines} lines, over the ceiling of ${FUNCTION_CEILING}: split it`);
      }
    }
    for (const key of Object.keys(LONG_FUNCTIONS)) if (!seen.has(key)) wrong.push(`${key} is gone: remove it from LONG_FUNCTIONS`);
    expect(wrong).toEqual([]);
  });

  test("docs/architecture.md states the layer order the test enforces", () => {
    const doc = readFileSync(join(ROOT, "docs/architecture.md"), "utf8");
    expect(doc).toContain(layerTable());
  });
});

/** The layer order as docs/architecture.md shows it (a stale doc prints what it should hold). */
function layerTable(): string {
  const rows = LAYERS.map((entries, i) => `${String(i + 1).padStart(2)}  ${entries.map((e) => `\`${e}\``).join(", ")}: ${LAYER_NAMES[i]}`);
  return ["```", ...rows, "```"].join("\n");
}
