/**
 * A processor's program is compiled once and kept with the processor: its creation's compile is
 * the one its runners (each start and restart) and the API's answers use.
 */
import { describe, expect, test } from "bun:test";
import { InvalidProgramError, ProcessorPrograms, type StreamCompiler } from "../../src/domains/processors/programs.ts";
import { compileStream } from "../../src/sql/index.ts";
import { action, createProcessor, getProcessor, processorFixture, produce, sourceAndTarget, untilFigures, untilState } from "./helpers.ts";

const f = processorFixture();
const { kafka, made } = f;

/** A compiler that counts what it compiles. */
function counting(): { compiler: StreamCompiler; compiled: string[] } {
  const compiled: string[] = [];
  return {
    compiled,
    compiler: (sql, catalog, options) => {
      compiled.push(sql);
      return compileStream(sql, catalog, options);
    },
  };
}

describe("24.1: a processor's program is compiled once and kept", () => {
  test("24.1: created through the API, it is compiled once for its runner's start, a restart after pause and resume, and every answer", async () => {
    const { source, target } = await sourceAndTarget(kafka(), "once", made, 2);
    await produce(
      kafka(),
      source,
      Array.from({ length: 20 }, (_, n) => ({ key: `k${n}`, value: { n }, partition: n % 2 })),
    );
    const rt = f.rt();
    const before = rt.processors.programs.compilations;
    const id = await createProcessor(rt, `once-${source}`, `INSERT INTO \`${target}\` SELECT STREAM n FROM \`${source}\` WHERE n >= 0`);
    await untilFigures(rt, id, "all records in", (figures) => figures.recordsIn >= 20);
    for (let i = 0; i < 3; i++) {
      expect((await getProcessor(rt, id)).deploymentState).toBe("RUNNING");
      expect((await rt.request("/api/streams", { role: "read" })).status).toBe(200);
    }
    // Pause stops the runner; resume starts a new one, which sets itself up again.
    expect((await action(rt, id, "pause")).status).toBe(200);
    await untilState(rt, id, "PAUSED");
    expect((await action(rt, id, "resume")).status).toBe(200);
    const resumed = await untilState(rt, id, "RUNNING");
    expect(resumed.operations).toEqual(["FILTER", "PROJECT"]);
    expect(rt.processors.programs.compilations - before).toBe(1);
    await action(rt, id, "delete");
  }, 90_000);

  test("24.1: a stored processor is compiled at its first use on an instance, then kept; one that no longer compiles is compiled once and fails its runners at once", () => {
    const { compiler, compiled } = counting();
    const programs = new ProcessorPrograms(compiler);
    const stored = { id: "lsql_1", sql: "INSERT INTO `out` SELECT STREAM * FROM `in`" };
    const first = programs.of(stored);
    expect(programs.of(stored)).toBe(first);
    expect(programs.peek(stored)).toBe(first);
    expect(compiled).toEqual([stored.sql]);

    // Kept at creation: never compiled again.
    const created = programs.compile("INSERT INTO `b` SELECT STREAM * FROM `a`");
    programs.keep("lsql_2", "INSERT INTO `b` SELECT STREAM * FROM `a`", created);
    expect(programs.of({ id: "lsql_2", sql: "INSERT INTO `b` SELECT STREAM * FROM `a`" })).toBe(created);
    expect(programs.compilations).toBe(2);

    const broken = { id: "lsql_3", sql: "INSERT INTO `b` SELECT STREAM nope( FROM `a`" };
    expect(() => programs.of(broken)).toThrow(InvalidProgramError);
    expect(() => programs.of(broken)).toThrow(/^The program is no longer valid: /);
    expect(programs.peek(broken)).toBeNull();
    expect(programs.compilations).toBe(3);

    // Deleted: forgotten.
    programs.forget("lsql_1");
    programs.of(stored);
    expect(programs.compilations).toBe(4);
  });
});
