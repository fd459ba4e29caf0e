/**
 * Prints the role table (the access rules of the route declarations, src/routes.ts) as Markdown, or with --write puts it
 * into docs/api.md between the role-table markers (as `bun scripts/docs.ts --write` does). test/docs.test.ts checks it is current.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ROLES } from "../src/config/schema.ts";
import { LEVEL_ROLES } from "../src/http/access.ts";
import { ACCESS_RULES } from "../src/routes.ts";

export function roleTable(): string {
  const head = `| Method | Path | ${ROLES.join(" | ")} | Audit |\n|---|---|${ROLES.map(() => ":-:").join("|")}|---|`;
  const rows = ACCESS_RULES.map((r) => {
    const cells = ROLES.map((role) => (r.level === "public" ? "public" : LEVEL_ROLES[r.level].includes(role) ? "✓" : "—"));
    return `| ${r.method} | \`${r.path}\` | ${cells.join(" | ")} | ${r.audit ? `${r.audit.type} ${r.audit.change}` : ""} |`;
  });
  return [head, ...rows].join("\n");
}

if (import.meta.main) {
  if (process.argv.includes("--write")) {
    const { withGenerated } = await import("./docs.ts");
    const path = join(import.meta.dir, "../docs/api.md");
    writeFileSync(path, withGenerated(readFileSync(path, "utf8"), "role-table", roleTable(), "docs/api.md"));
    console.log("docs/api.md role table updated");
  } else console.log(roleTable());
}
