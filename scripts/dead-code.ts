/**
 * Dead code in src/ and ui/: files nothing reaches, and exports nothing uses. Part of
 * `npm test`; prints what it finds and exits 1. An export that its own file uses (a type in the
 * signature of another export, a helper beside its caller) is not reported, as with knip's
 * `ignoreExportsUsedInFile`: only what nothing at all uses is dead.
 *
 * Reached from: src/main.ts, ui/main.tsx (the bundle's entry), build.ts, and every file under
 * scripts/, bench/ and test/. Imports are read with the TypeScript parser (no type checking):
 * named and default imports, `import * as`, re-exports (`export { a } from`, `export * from`),
 * `import("...")` in code and in types.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";

const ROOT = join(import.meta.dir, "..");
/** Where dead code is looked for. */
const CHECKED = ["src", "ui"];
/** Files that run by themselves (besides everything under these folders). */
const ENTRY_FILES = ["src/main.ts", "ui/main.tsx", "build.ts"];
const ENTRY_FOLDERS = ["scripts", "bench", "test"];

/**
 * Exports kept although no file imports them, each with its reason. Keep it short: an entry
 * here is dead code unless something outside TypeScript's imports uses it.
 */
const ALLOWED: Record<string, string> = {};

type Use = { from: string; name: string }; // name "*": every export

interface FileFacts {
  /** Names this file declares and exports itself. */
  local: Set<string>;
  /** `export { imported as exported } from "from"`. */
  reexports: Array<{ from: string; imported: string; exported: string }>;
  /** `export * from "from"`. */
  stars: string[];
  uses: Use[];
  /** How often each identifier occurs in the file (a declaration's own name counts once). */
  mentions: Map<string, number>;
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  if (!existsSync(dir)) return out;
  for (const entry of readdirSync(dir)) {
    if (entry === "node_modules" || entry.startsWith(".")) continue;
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (/\.tsx?$/.test(entry) && !entry.endsWith(".d.ts")) out.push(path);
  }
  return out;
}

function resolveImport(fromFile: string, spec: string): string | null {
  if (!spec.startsWith(".")) return null;
  const base = resolve(dirname(fromFile), spec);
  for (const candidate of [base, `${base}.ts`, `${base}.tsx`, join(base, "index.ts")])
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  return null;
}

function hasExport(node: ts.Node): boolean {
  return ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
}
function hasDefault(node: ts.Node): boolean {
  return ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.DefaultKeyword);
}

function bindingNames(name: ts.BindingName, out: Set<string>): void {
  if (ts.isIdentifier(name)) out.add(name.text);
  else for (const el of name.elements) if (!ts.isOmittedExpression(el)) bindingNames(el.name, out);
}

function factsOf(file: string): FileFacts {
  const text = readFileSync(file, "utf8");
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, file.endsWith(".tsx") ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const facts: FileFacts = { local: new Set(), reexports: [], stars: [], uses: [], mentions: new Map() };
  const target = (spec: ts.Expression | undefined) => (spec && ts.isStringLiteral(spec) ? resolveImport(file, spec.text) : null);

  for (const stmt of sf.statements) {
    if (ts.isImportDeclaration(stmt)) {
      const from = target(stmt.moduleSpecifier);
      const clause = stmt.importClause;
      if (!from) continue;
      if (!clause)
        facts.uses.push({ from, name: "*" }); // a side-effect import runs the whole file
      else {
        if (clause.name) facts.uses.push({ from, name: "default" });
        const bindings = clause.namedBindings;
        if (bindings && ts.isNamespaceImport(bindings)) facts.uses.push({ from, name: "*" });
        if (bindings && ts.isNamedImports(bindings))
          for (const el of bindings.elements) facts.uses.push({ from, name: (el.propertyName ?? el.name).text });
      }
    } else if (ts.isExportDeclaration(stmt)) {
      const from = target(stmt.moduleSpecifier);
      if (stmt.moduleSpecifier && !from) continue;
      if (!stmt.exportClause) {
        if (from) facts.stars.push(from);
      } else if (ts.isNamespaceExport(stmt.exportClause)) {
        if (from) facts.reexports.push({ from, imported: "*", exported: stmt.exportClause.name.text });
      } else
        for (const el of stmt.exportClause.elements) {
          const imported = (el.propertyName ?? el.name).text;
          if (from) facts.reexports.push({ from, imported, exported: el.name.text });
          else facts.local.add(el.name.text);
        }
    } else if (ts.isExportAssignment(stmt)) facts.local.add("default");
    else if (hasExport(stmt)) {
      if (hasDefault(stmt)) facts.local.add("default");
      else if (ts.isVariableStatement(stmt)) for (const d of stmt.declarationList.declarations) bindingNames(d.name, facts.local);
      else {
        const name = (stmt as ts.DeclarationStatement).name;
        if (name && ts.isIdentifier(name)) facts.local.add(name.text);
      }
    }
  }

  // import("...") anywhere, in code or in a type.
  const visit = (node: ts.Node): void => {
    if (ts.isIdentifier(node)) facts.mentions.set(node.text, (facts.mentions.get(node.text) ?? 0) + 1);
    if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const from = target(node.arguments[0]);
      if (from) facts.uses.push({ from, name: "*" });
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      const from = resolveImport(file, node.argument.literal.text);
      const q = node.qualifier;
      if (from) facts.uses.push({ from, name: q ? (ts.isIdentifier(q) ? q.text : q.left.getText(sf)) : "*" });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return facts;
}

export interface DeadCode {
  files: string[];
  exports: string[];
}

export function findDeadCode(root = ROOT): DeadCode {
  const all = [...CHECKED, ...ENTRY_FOLDERS].flatMap((d) => sourceFiles(join(root, d)));
  for (const f of ENTRY_FILES) if (existsSync(join(root, f)) && !all.includes(join(root, f))) all.push(join(root, f));
  const facts = new Map(all.map((f) => [f, factsOf(f)]));

  // Reachability, from the entries along every import and re-export.
  const reached = new Set<string>();
  const queue = [
    ...ENTRY_FILES.map((f) => join(root, f)),
    ...all.filter((f) => ENTRY_FOLDERS.some((d) => f.startsWith(join(root, d) + "/"))),
  ].filter((f) => facts.has(f));
  while (queue.length > 0) {
    const f = queue.pop()!;
    if (reached.has(f)) continue;
    reached.add(f);
    const x = facts.get(f)!;
    for (const next of [...x.uses.map((u) => u.from), ...x.reexports.map((r) => r.from), ...x.stars]) if (facts.has(next)) queue.push(next);
  }

  // Which exports another file uses, following re-exports to where the name is declared.
  const used = new Set<string>();
  const seen = new Set<string>();
  const use = (file: string, name: string): void => {
    const key = `${file}\u0000${name}`;
    if (seen.has(key)) return;
    seen.add(key);
    const x = facts.get(file);
    if (!x) return;
    if (name === "*") {
      for (const n of x.local) used.add(`${file}\u0000${n}`);
      for (const r of x.reexports) {
        used.add(`${file}\u0000${r.exported}`);
        use(r.from, r.imported);
      }
      for (const s of x.stars) use(s, "*");
      return;
    }
    used.add(key);
    if (x.local.has(name)) return;
    for (const r of x.reexports) if (r.exported === name) use(r.from, r.imported);
    for (const s of x.stars) use(s, name);
  };
  for (const [, x] of facts) for (const u of x.uses) use(u.from, u.name);

  const checked = (f: string) => CHECKED.some((d) => f.startsWith(join(root, d) + "/"));
  const files = all.filter((f) => checked(f) && !reached.has(f)).map((f) => relative(root, f));
  const exports: string[] = [];
  for (const [f, x] of facts) {
    if (!checked(f) || !reached.has(f)) continue;
    const names = [...[...x.local].filter((n) => (x.mentions.get(n) ?? 0) < 2), ...x.reexports.map((r) => r.exported)];
    for (const n of names) {
      const label = `${relative(root, f)}: ${n}`;
      if (!used.has(`${f}\u0000${n}`) && !(label in ALLOWED)) exports.push(label);
    }
  }
  return { files: files.sort(), exports: exports.sort() };
}

if (import.meta.main) {
  const dead = findDeadCode();
  if (dead.files.length === 0 && dead.exports.length === 0) {
    console.log("dead-code: no unused files or exports in src/ and ui/");
  } else {
    if (dead.files.length > 0) console.error(`Unused files (nothing imports them):\n${dead.files.map((f) => `  ${f}`).join("\n")}`);
    if (dead.exports.length > 0)
      console.error(
        `Unused exports (no other file imports them; drop the export or the code):\n${dead.exports.map((e) => `  ${e}`).join("\n")}`,
      );
    process.exit(1);
  }
}
