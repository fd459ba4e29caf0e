// @no-services
/**
 * The built UI bundle carries what is meant for the browser and not the query language's
 * machinery: no lexer, parser, analyzer or evaluator. The server reads a statement for the editor
 * (`GET /api/sql/validation?editor=true`); test/architecture.test.ts holds the imports, this the
 * bundle that ships.
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { buildUi } from "../../src/ui/bundle.ts";

const SQL = join(import.meta.dir, "../../src/sql");

/** Words only each module of the language writes (its messages), checked to be there still. */
const MARKERS: Record<string, readonly string[]> = {
  "lexer.ts": ["Unterminated comment", "Empty quoted name", "Too many tokens"],
  "parser.ts": ["Column path nested too deeply", "A second window"],
};

test("24: the UI bundle holds no lexer or parser of the query language", async () => {
  for (const [file, words] of Object.entries(MARKERS)) {
    const source = readFileSync(join(SQL, file), "utf8");
    for (const word of words) expect(`${file}: ${source.includes(word)}`).toBe(`${file}: true`);
  }
  const main = await (await buildUi()).get("/ui/main.js")!.text();
  // What the editor does carry (its words), so the bundle read is the real one.
  expect(main).toContain("SQL query");
  for (const [file, words] of Object.entries(MARKERS))
    for (const word of words) expect(`${file}'s ${JSON.stringify(word)} in the bundle: ${main.includes(word)}`).toEndWith(": false");
}, 60_000);
