// @no-services
/** The docs: generated pages are current, the front page stays a front page, and links lead somewhere. */
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { configRows, stalePages } from "../scripts/docs.ts";
import { ENV_OVERRIDES } from "../src/config/load.ts";

const root = join(import.meta.dir, "..");
const pages = [
  "README.md",
  ...readdirSync(join(root, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
];

/** The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces as `-`. */
function anchorsOf(file: string): Set<string> {
  const text = readFileSync(file, "utf8").replace(/```[\s\S]*?```/g, "");
  return new Set(
    [...text.matchAll(/^#{1,6} (.+)$/gm)].map((h) =>
      h[1]!
        .trim()
        .toLowerCase()
        .replace(/[^\p{L}\p{N}_\- ]/gu, "")
        .replace(/ /g, "-"),
    ),
  );
}

describe("docs", () => {
  test("24: the generated pages (configuration reference, role table) are what the code says", () => {
    expect(stalePages()).toEqual([]);
  });

  test("the configuration reference has every environment variable beside its key", () => {
    const rows = configRows();
    for (const [name, o] of Object.entries(ENV_OVERRIDES)) {
      const key = o.key.replace(/\[[^\]]*\]/g, "[]");
      expect({ name, row: rows.some((r) => (r.key === key || r.key.startsWith(`${key}.`)) && r.env.includes(name)) }).toEqual({
        name,
        row: true,
      });
    }
  });

  test("README is a front page, with the two commands of the quick start", () => {
    const readme = readFileSync(join(root, "README.md"), "utf8");
    expect(readme.split("\n").length).toBeLessThanOrEqual(250);
    expect(readme).toContain("npm ci && npm run dev");
    expect(readme).toContain("npm ci && npm test");
  });

  test("relative links lead to files that exist, and to headings they have", () => {
    const broken: string[] = [];
    for (const page of pages) {
      const text = readFileSync(join(root, page), "utf8").replace(/```[\s\S]*?```/g, "");
      for (const m of text.matchAll(/\]\(([^)\s#]*)(#[^)\s]*)?\)/g)) {
        const target = m[1]!;
        if (/^[a-z]+:/.test(target)) continue;
        const file = target ? join(root, dirname(page), target) : join(root, page);
        if (!existsSync(file)) broken.push(`${page}: ${target}`);
        else if (m[2] && file.endsWith(".md") && !anchorsOf(file).has(m[2].slice(1))) broken.push(`${page}: ${target}${m[2]}`);
      }
    }
    expect(broken).toEqual([]);
  });
});
