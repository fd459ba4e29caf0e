// @no-services
/**
 * One registration per area (24.1): an area of the API is one line in src/areas.ts, one entry in
 * ui/areas.tsx and one role-matrix fixture per route (test/http/role-matrix.test.ts checks those).
 * These tests fail when one of the lists forgets an area.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { AREAS } from "../src/areas.ts";
import type { Area } from "../src/http/area.ts";
import { ROUTES } from "../src/routes.ts";

const ROOT = resolve(import.meta.dir, "..");
const DOMAINS = join(ROOT, "src/domains");

describe("areas", () => {
  test("24.1: every domain folder that declares routes has an area.ts, and every area it exports is in src/areas.ts", async () => {
    const listed = new Set<Area<never>>(AREAS);
    const problems: string[] = [];
    for (const folder of readdirSync(DOMAINS, { withFileTypes: true }).filter((d) => d.isDirectory())) {
      const files = readdirSync(join(DOMAINS, folder.name));
      if (!files.some((f) => f === "routes.ts" || f.endsWith("-routes.ts"))) continue;
      if (!files.includes("area.ts")) {
        problems.push(`src/domains/${folder.name} has routes but no area.ts`);
        continue;
      }
      const areas = Object.values(await import(join(DOMAINS, folder.name, "area.ts"))) as Area<never>[];
      if (areas.length === 0) problems.push(`src/domains/${folder.name}/area.ts exports no area`);
      for (const area of areas)
        if (!listed.has(area)) problems.push(`area ${area.name} (src/domains/${folder.name}) is not in src/areas.ts`);
    }
    expect(problems).toEqual([]);
  });

  test("24.1: area names are unique and kebab-case, and each route belongs to one area", () => {
    const names = AREAS.map((a) => a.name);
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) expect(name).toMatch(/^[a-z]+(-[a-z]+)*$/);
    const routes = AREAS.flatMap((a) => a.routes);
    expect(new Set(routes).size).toBe(routes.length);
    expect(routes).toEqual([...ROUTES]);
  });

  test("24.1: every area has a UI entry (a page, or why it has none), and every UI entry names an area", () => {
    const run = Bun.spawnSync(["bun", join(ROOT, "test/helpers/ui-area-pages.ts")], { cwd: ROOT, stderr: "pipe" });
    expect(run.stderr.toString()).toBe("");
    const pages = JSON.parse(run.stdout.toString()) as Record<string, string | null>;
    const names = AREAS.map((a) => a.name as string);
    expect({ withoutEntry: names.filter((n) => !(n in pages)), unknown: Object.keys(pages).filter((n) => !names.includes(n)) }).toEqual({
      withoutEntry: [],
      unknown: [],
    });
    // The admin pages are there (what the role table calls admin-only has a page an admin can open).
    expect(pages).toMatchObject({ users: "/users", groups: "/groups", "service-accounts": "/service-accounts" });
  });
});
