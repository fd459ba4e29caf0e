/**
 * The generated parts of docs/: the configuration reference (docs/configuration.md, from the zod
 * schema of src/config/schema.ts, its doc comments and ENV_OVERRIDES) and the role table
 * (docs/api.md, from the route declarations, see scripts/role-table.ts). Each sits between
 * `<!-- <name>:begin -->` and `<!-- <name>:end -->` markers in hand-written text.
 *
 *   bun scripts/docs.ts           checks: exit 1 naming each stale page
 *   bun scripts/docs.ts --write   rewrites the generated parts
 *
 * test/docs.test.ts fails when a page is stale.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import type { z } from "zod";
import { ENV_OVERRIDES } from "../src/config/load.ts";
import { configSchema } from "../src/config/schema.ts";
import { byteSize, duration } from "../src/config/values.ts";
import { roleTable } from "./role-table.ts";

const ROOT = join(import.meta.dir, "..");

// --- The configuration reference -------------------------------------------------------------

/** Where the schemas declared on their own sit in the file (their doc comments are found by it). */
const SCHEMA_PLACES: Record<string, string[]> = {
  configSchema: [""],
  clusterSchema: ["kafka.clusters"],
  saslSchema: ["kafka.clusters.sasl"],
  tlsSchema: ["kafka.clusters.tls"],
  authorizerSchema: ["kafka.clusters.authorizer"],
  connectSchema: ["connect"],
  connectClusterSchema: ["connect.clusters"],
  httpAuthSchema: ["connect.clusters.auth", "schemaRegistry.auth"],
  httpTlsSchema: ["connect.clusters.tls", "schemaRegistry.tls"],
  schemaRegistrySchema: ["schemaRegistry"],
  userSchema: ["users"],
  groupSchema: ["groups"],
  ldapSchema: ["ldap"],
  webhookSchema: ["alerts.webhooks"],
};

/** Doc comments of the schemas' keys, by the key's path (without `[]`). */
function keyComments(): Map<string, string> {
  const out = new Map<string, string>();
  for (const file of ["src/config/schema.ts", "src/config/groups.ts", "src/config/ldap.ts"]) {
    const text = readFileSync(join(ROOT, file), "utf8");
    const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node, places: string[] | null, chain: string[]): void => {
      if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name)) {
        const known = SCHEMA_PLACES[node.name.text];
        if (node.initializer) visit(node.initializer, known ?? null, []);
        return;
      }
      if (ts.isPropertyAssignment(node) && places && (ts.isIdentifier(node.name) || ts.isStringLiteral(node.name))) {
        const next = [...chain, node.name.text];
        const doc = ts
          .getJSDocCommentsAndTags(node)
          .filter(ts.isJSDoc)
          .map((d) => (typeof d.comment === "string" ? d.comment : (ts.getTextOfJSDocComment(d.comment) ?? "")))
          .join(" ")
          .replace(/\s+/g, " ")
          .trim();
        if (doc) for (const place of places) out.set([place, ...next].filter(Boolean).join("."), doc);
        visit(node.initializer, places, next);
        return;
      }
      // A default's own object literal repeats the keys: its comments (none) are not the schema's.
      if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && node.expression.name.text === "default") {
        visit(node.expression.expression, places, chain);
        return;
      }
      ts.forEachChild(node, (child) => visit(child, places, chain));
    };
    visit(sf, null, []);
  }
  return out;
}

interface KeyRow {
  key: string;
  type: string;
  default: string;
  env: string;
  meaning: string;
}

type Def = { type: string; [k: string]: unknown };
const defOf = (s: z.ZodType): Def => (s as unknown as { _zod: { def: Def } })._zod.def;

/** What the file accepts, in words. */
function typeText(s: z.ZodType): string {
  if (s === duration) return "duration";
  if (s === byteSize) return "size";
  const d = defOf(s);
  switch (d.type) {
    case "string":
      return "string";
    case "number":
      return "integer";
    case "boolean":
      return "boolean";
    case "enum":
      return Object.values(d.entries as Record<string, string>)
        .map((v) => `\`${v}\``)
        .join(" \\| ");
    case "literal":
      return (d.values as unknown[]).map((v) => `\`${JSON.stringify(v)}\``).join(" \\| ");
    case "array":
      return `list of ${typeText(d.element as z.ZodType)}`;
    case "record":
      return `table of ${typeText(d.valueType as z.ZodType)}`;
    case "union": {
      const parts = [...new Set((d.options as z.ZodType[]).map(typeText))];
      return parts.join(" or ");
    }
    case "pipe":
      return typeText(d.in as z.ZodType);
    case "default":
    case "optional":
    case "nullable":
      return typeText(d.innerType as z.ZodType);
    case "lazy":
      return typeText((d.getter as () => z.ZodType)());
    case "transform":
      return "string";
    default:
      return d.type;
  }
}

function humanMs(ms: number): string {
  for (const [unit, n] of [
    ["d", 86_400_000],
    ["h", 3_600_000],
    ["m", 60_000],
    ["s", 1000],
  ] as const)
    if (ms > 0 && ms % n === 0) return `${ms / n}${unit}`;
  return `${ms}ms`;
}

function humanBytes(n: number): string {
  for (const [unit, f] of [
    ["g", 1024 ** 3],
    ["m", 1024 ** 2],
    ["k", 1024],
  ] as const)
    if (n > 0 && n % f === 0) return `${n / f}${unit}`;
  return String(n);
}

function defaultText(value: unknown, leaf: z.ZodType): string {
  if (value === undefined) return "";
  if (leaf === duration && typeof value === "number") return `\`${humanMs(value)}\``;
  if (leaf === byteSize && typeof value === "number") return `\`${humanBytes(value)}\``;
  return `\`${JSON.stringify(value)}\``;
}

/** The schema under wrappers that only add a default, an option or a check. */
function unwrap(s: z.ZodType): { inner: z.ZodType; defaultValue?: unknown; optional: boolean } {
  let inner = s;
  let defaultValue: unknown;
  let optional = false;
  for (;;) {
    if (inner === duration || inner === byteSize) break;
    const d = defOf(inner);
    if (d.type === "default") {
      defaultValue ??= typeof d.defaultValue === "function" ? (d.defaultValue as () => unknown)() : d.defaultValue;
      inner = d.innerType as z.ZodType;
    } else if (d.type === "optional" || d.type === "nullable") {
      optional = true;
      inner = d.innerType as z.ZodType;
    } else if (d.type === "lazy") inner = (d.getter as () => z.ZodType)();
    else if (d.type === "pipe" && (d.in === duration || d.in === byteSize || defOf(d.in as z.ZodType).type === "object"))
      inner = d.in as z.ZodType;
    else break;
  }
  return { inner, defaultValue, optional };
}

function envFor(key: string): string {
  const names = Object.entries(ENV_OVERRIDES)
    .filter(([, o]) => {
      const set = o.key.replace(/\[[^\]]*\]/g, "[]");
      // A variable that sets a whole table (`connect.clusters[].topics`) is named on each of its keys.
      return key === set || key.startsWith(`${set}.`);
    })
    .map(([name, o]) => (o.form ? `\`${name}\` (${o.form})` : `\`${name}\``));
  return names.join(", ");
}

export function configRows(): KeyRow[] {
  const comments = keyComments();
  const rows: KeyRow[] = [];
  const walk = (s: z.ZodType, path: string, inherited: unknown, required: boolean): void => {
    const { inner, defaultValue, optional } = unwrap(s);
    const d = inner === duration || inner === byteSize ? null : defOf(inner);
    const given = defaultValue !== undefined ? defaultValue : inherited;
    if (d?.type === "object") {
      const shape = d.shape as Record<string, z.ZodType>;
      for (const [k, child] of Object.entries(shape))
        walk(child, path ? `${path}.${k}` : k, (given as Record<string, unknown> | undefined)?.[k], required && !optional);
      return;
    }
    if (d?.type === "array" && unwrap(d.element as z.ZodType).inner !== undefined) {
      const element = unwrap(d.element as z.ZodType).inner;
      if (element !== duration && element !== byteSize && defOf(element).type === "object") {
        if (defaultValue !== undefined && (defaultValue as unknown[]).length > 0)
          rows.push({
            key: `${path}[]`,
            type: "list of tables",
            default: defaultText(defaultValue, inner),
            env: envFor(path),
            meaning: comments.get(path) ?? "",
          });
        walk(d.element as z.ZodType, `${path}[]`, undefined, true);
        return;
      }
    }
    const bare = path.replace(/\[\]/g, "");
    let dflt = defaultText(given, inner);
    if (!dflt) dflt = optional ? "none" : required ? "required" : "required in its section";
    // A key without a comment of its own says what its section says (`sql.schemaRegistry.urls`).
    const meaning = comments.get(bare) ?? comments.get(bare.slice(0, bare.lastIndexOf("."))) ?? "";
    rows.push({ key: path, type: typeText(inner), default: dflt, env: envFor(path), meaning });
  };
  walk(configSchema as unknown as z.ZodType, "", undefined, true);
  return rows;
}

export function configReference(): string {
  const cell = (t: string) => t.replace(/\|/g, "\\|").replace(/\\\\\|/g, "\\|");
  const head = "| Key | Type | Default | Environment | Meaning |\n|---|---|---|---|---|";
  const lines = configRows().map((r) => `| \`${r.key}\` | ${r.type} | ${r.default} | ${r.env} | ${cell(r.meaning)} |`);
  return [head, ...lines].join("\n");
}

// --- Pages -----------------------------------------------------------------------------------

interface Generated {
  page: string;
  marker: string;
  content: () => string;
}

export const GENERATED: Generated[] = [
  { page: "docs/configuration.md", marker: "config-reference", content: configReference },
  { page: "docs/api.md", marker: "role-table", content: roleTable },
];

/** The page with its generated part replaced by `content`. */
export function withGenerated(text: string, marker: string, content: string, page = "page"): string {
  const begin = `<!-- ${marker}:begin -->`;
  const end = `<!-- ${marker}:end -->`;
  const a = text.indexOf(begin);
  const b = text.indexOf(end);
  if (a < 0 || b < a) throw new Error(`${page} has no ${begin} ... ${end} markers`);
  return `${text.slice(0, a + begin.length)}\n${content}\n${text.slice(b)}`;
}

/** The pages whose generated part is not what the code says today. */
export function stalePages(): string[] {
  return GENERATED.filter((g) => {
    const text = readFileSync(join(ROOT, g.page), "utf8");
    return text !== withGenerated(text, g.marker, g.content(), g.page);
  }).map((g) => g.page);
}

if (import.meta.main) {
  if (process.argv.includes("--write")) {
    for (const g of GENERATED) {
      const path = join(ROOT, g.page);
      const text = readFileSync(path, "utf8");
      const next = withGenerated(text, g.marker, g.content(), g.page);
      if (next !== text) {
        writeFileSync(path, next);
        console.log(`${g.page}: updated`);
      }
    }
  } else {
    const stale = stalePages();
    if (stale.length > 0) {
      console.error(`Stale generated docs (run bun scripts/docs.ts --write): ${stale.join(", ")}`);
      process.exit(1);
    }
    console.log("docs: generated pages are current");
  }
}
