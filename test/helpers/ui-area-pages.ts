/**
 * Prints the UI's page entries (ui/areas.tsx) as JSON: each area's navigation path, or null
 * for an area that declares it has no page. Run in a process of its own by test/areas.test.ts:
 * the pages are stubbed (their exports read, not run), so no browser is needed and no other
 * test sees the stubs.
 */
Bun.plugin({
  name: "stub ui pages",
  setup(build) {
    build.onLoad({ filter: /[/\\]ui[/\\]pages[/\\][^/\\]+\.tsx?$/ }, async ({ path }) => {
      const { exports } = new Bun.Transpiler({ loader: "tsx" }).scan(await Bun.file(path).text());
      return { contents: exports.map((name) => `export const ${name} = undefined;`).join("\n"), loader: "js" };
    });
  },
});

// A computed path: the server's type-check does not follow it into the browser's code.
const { AREA_PAGES } = await import(new URL("../../ui/areas.tsx", import.meta.url).pathname);
const entries = Object.entries(AREA_PAGES as Record<string, { page?: false; nav?: { path: string } }>);
console.log(JSON.stringify(Object.fromEntries(entries.map(([name, entry]) => [name, entry.nav?.path ?? null]))));
