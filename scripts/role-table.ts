/**
 * Prints the role table (the access rules of the route declarations, src/routes.ts) as Markdown, or with --write puts it
 * into README.md between the role-table markers. A test checks the README is current.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ROLES } from "../src/config/schema.ts";
import { LEVEL_ROLES } from "../src/http/access.ts";
import { ACCESS_RULES } from "../src/routes.ts";

export const BEGIN = "<!-- role-table:begin -->";
export const END = "<!-- role-table:end -->";

export function roleTable(): string {
  const head = `| Method | Path | ${ROLES.join(" | ")} | Audit |\n|---|---|${ROLES.map(() => ":-:").join("|")}|---|`;
  const rows = ACCESS_RULES.map((r) => {
    const cells = ROLES.map((role) => (r.level === "public" ? "public" : LEVEL_ROLES[r.level].includes(role) ? "✓" : "—"));
    return `| ${r.method} | \`${r.path}\` | ${cells.join(" | ")} | ${r.audit ? `${r.audit.type} ${r.audit.change}` : ""} |`;
  });
  return [head, ...rows].join("\n");
}

export function readmeWithTable(readme: string): string {
  const a = readme.indexOf(BEGIN);
  const b = readme.indexOf(END);
  if (a < 0 || b < 0) throw new Error("README.md has no role-table markers");
  return `${readme.slice(0, a + BEGIN.length)}\n${roleTable()}\n${readme.slice(b)}`;
}

if (import.meta.main) {
  if (process.argv.includes("--write")) {
    const path = join(import.meta.dir, "../README.md");
    writeFileSync(path, readmeWithTable(readFileSync(path, "utf8")));
    console.log("README.md role table updated");
  } else console.log(roleTable());
}
