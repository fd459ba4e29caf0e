/**
 * Processors writing Avro (SET output.format = AVRO) against the real broker and the real
 * schema registry: values are written in the schema registered for the target's values, in the
 * registry's wire format; a value the schema does not take follows the error policy; a schema
 * that cannot hold the program's output is refused at creation, before anything is created.
 */
import { describe, expect, test } from "bun:test";
import avro from "avsc";
import { registryEnv, uniqueTopic } from "../cluster/cluster.ts";
import { registerSchema } from "../helpers/registry.ts";
import {
  createProcessor,
  jsonTopic,
  type OutRecord,
  outputOf,
  processorFixture,
  produce,
  readAll,
  sourceAndTarget,
  untilFigures,
  untilState,
} from "./helpers.ts";

const f = processorFixture({ schemaRegistry: { urls: registryEnv().urls } });
const { kafka, made } = f;
const T0 = Math.floor(1_700_000_000_000 / 60_000) * 60_000;
const s = (seconds: number) => T0 + seconds * 1000;

/** Parses the registry's wire format: magic byte 0, the schema id, then the Avro binary. */
function wireParser(id: number, type: avro.Type) {
  return (bytes: Uint8Array): unknown => {
    const b = Buffer.from(bytes);
    if (b[0] !== 0 || b.readInt32BE(1) !== id) throw new Error(`not written under schema ${id}: ${b.subarray(0, 5).toString("hex")}`);
    return { ...(type.fromBuffer(b.subarray(5)) as object) };
  };
}

const OUT_SCHEMA = {
  type: "record",
  name: "Picked",
  fields: [
    { name: "id", type: "long" },
    { name: "label", type: "string" },
    { name: "note", type: ["null", "string"], default: null },
  ],
};

describe("Avro output", () => {
  test("a filter and projection writes Avro in the target's registered schema, in the registry's wire format", async () => {
    const { source, target } = await sourceAndTarget(kafka(), "avro", made, 2);
    const id = await registerSchema(`${target}-value`, OUT_SCHEMA);
    const pid = await createProcessor(
      f.rt(),
      `avro-${source}`,
      `SET output.format = AVRO; INSERT INTO \`${target}\` SELECT STREAM id, name AS label FROM \`${source}\` WHERE sel < 50`,
    );
    const input = Array.from({ length: 40 }, (_, i) => ({
      key: `k${i}`,
      value: { id: i, name: `n${i}`, sel: i % 2 === 0 ? 10 : 90 },
      partition: i % 2,
    }));
    await produce(kafka(), source, input);
    const expected = input.filter((r) => r.value.sel < 50);
    const out = await outputOf(kafka(), target, expected.length, 60_000, wireParser(id, avro.Type.forSchema(OUT_SCHEMA as avro.Schema)));
    expect(out.map((r) => r.value).sort((a, b) => (a as { id: number }).id - (b as { id: number }).id)).toEqual(
      expected.map((r) => ({ id: r.value.id, label: r.value.name, note: null })),
    );
    // Keys are the input's, as with JSON output.
    expect(out.map((r) => r.key).sort()).toEqual(expected.map((r) => r.key).sort());
    const p = await untilFigures(f.rt(), pid, "every input record counted", (x) => x.recordsIn === input.length);
    expect(p.deploymentState).toBe("RUNNING");
    expect(p.figures.failed).toBe(0);
  }, 90_000);

  test("a value the schema does not take is skipped and counted as failed", async () => {
    const { source, target } = await sourceAndTarget(kafka(), "avro-bad", made);
    const id = await registerSchema(`${target}-value`, OUT_SCHEMA);
    const pid = await createProcessor(
      f.rt(),
      `avro-bad-${source}`,
      `SET output.format = AVRO; INSERT INTO \`${target}\` SELECT STREAM id, name AS label FROM \`${source}\``,
    );
    await produce(kafka(), source, [{ value: { id: 1, name: "one" } }, { value: { id: 2, name: 2 } }, { value: { id: 3, name: "three" } }]);
    const out = await outputOf(kafka(), target, 2, 60_000, wireParser(id, avro.Type.forSchema(OUT_SCHEMA as avro.Schema)));
    expect(out.map((r) => r.value)).toEqual([
      { id: 1, label: "one", note: null },
      { id: 3, label: "three", note: null },
    ]);
    const p = await untilFigures(f.rt(), pid, "the bad record counted as failed", (x) => x.recordsIn === 3 && x.failed === 1);
    expect(p.figures.recordsOut).toBe(2);
  }, 90_000);

  test("a tumbling COUNT and SUM writes each closed window in Avro, window bounds included", async () => {
    const { source, target } = await sourceAndTarget(kafka(), "avro-agg", made);
    const schema = {
      type: "record",
      name: "Orders",
      fields: [
        { name: "customer", type: "string" },
        { name: "orders", type: "long" },
        { name: "total", type: "double" },
        { name: "windowStart", type: "long" },
        { name: "windowEnd", type: "long" },
      ],
    };
    const id = await registerSchema(`${target}-value`, schema);
    await createProcessor(
      f.rt(),
      `avro-agg-${source}`,
      `SET output.format = AVRO; INSERT INTO \`${target}\` SELECT STREAM _key AS customer, COUNT(*) AS orders, SUM(amount) AS total FROM \`${source}\` GROUP BY TUMBLE(1, m), _key`,
    );
    await produce(kafka(), source, [
      { key: "a", value: { amount: 1.5 }, timestamp: s(1) },
      { key: "b", value: { amount: 2 }, timestamp: s(2) },
      { key: "a", value: { amount: 3 }, timestamp: s(30) },
      { key: "c", value: { amount: 0 }, timestamp: s(65) },
    ]);
    const out = await outputOf(kafka(), target, 2, 60_000, wireParser(id, avro.Type.forSchema(schema as avro.Schema)));
    const byKey = (a: OutRecord, b: OutRecord) => String(a.key).localeCompare(String(b.key));
    expect(out.sort(byKey).map((r) => [r.key, r.value])).toEqual([
      ["a", { customer: "a", orders: 2, total: 4.5, windowStart: s(0), windowEnd: s(60) }],
      ["b", { customer: "b", orders: 1, total: 2, windowStart: s(0), windowEnd: s(60) }],
    ]);
  }, 90_000);
});

describe("a window result the schema does not take", () => {
  const schema = {
    type: "record",
    name: "ByRegion",
    fields: [
      { name: "region", type: "string" },
      { name: "orders", type: "long" },
      { name: "windowStart", type: "long" },
      { name: "windowEnd", type: "long" },
    ],
  };
  // The group of region 7 makes a result whose region is a number, which the schema refuses.
  const input = [
    { value: { region: "north" }, timestamp: s(1) },
    { value: { region: 7 }, timestamp: s(2) },
    { value: { region: "north" }, timestamp: s(3) },
    { value: { region: "south" }, timestamp: s(65) },
  ];
  const sqlOf = (policy: string, source: string, target: string) =>
    `SET output.format = AVRO; SET error.policy = ${policy}; INSERT INTO \`${target}\` SELECT STREAM region, COUNT(*) AS orders FROM \`${source}\` GROUP BY TUMBLE(1, m), region`;

  test("skip: the other windows are written, the refused result is counted as failed", async () => {
    const { source, target } = await sourceAndTarget(kafka(), "avro-win-skip", made);
    const id = await registerSchema(`${target}-value`, schema);
    const pid = await createProcessor(f.rt(), `avro-win-skip-${source}`, sqlOf("skip", source, target));
    await produce(kafka(), source, input);
    const out = await outputOf(kafka(), target, 1, 60_000, wireParser(id, avro.Type.forSchema(schema as avro.Schema)));
    expect(out.map((r) => r.value)).toEqual([{ region: "north", orders: 2, windowStart: s(0), windowEnd: s(60) }]);
    const p = await untilFigures(
      f.rt(),
      pid,
      "the refused result counted as failed",
      (x) => x.recordsIn === input.length && x.failed === 1,
    );
    expect(p.deploymentState).toBe("RUNNING");
    expect(p.figures.recordsOut).toBe(1);
  }, 90_000);

  test("stop: the processor is FAILED naming the result; nothing of that transaction is written", async () => {
    const { source, target } = await sourceAndTarget(kafka(), "avro-win-stop", made);
    await registerSchema(`${target}-value`, schema);
    const pid = await createProcessor(f.rt(), `avro-win-stop-${source}`, sqlOf("stop", source, target));
    await produce(kafka(), source, input);
    const failed = await untilState(f.rt(), pid, "FAILED");
    expect(failed.deploymentErrorMsg).toContain(`Cannot write a result for partition 0 of '${target}'`);
    expect(await readAll(kafka(), target)).toEqual([]);
  }, 90_000);
});

describe("Avro output refused at creation", () => {
  const refused = async (sql: string, name: string) => {
    const res = await f.rt().request("/api/streams", {
      method: "POST",
      role: "write",
      body: JSON.stringify({ name, sql, runners: 1, clusterName: "" }),
    });
    // Created: the bare id as text; refused: the JSON error body.
    const text = await res.text();
    if (res.status === 200) return { status: res.status, message: text };
    const body = JSON.parse(text) as { message?: string; error?: string };
    return { status: res.status, message: String(body.message ?? body.error ?? text) };
  };

  test("no schema for the target's values: 400, and the target is not created", async () => {
    const source = await jsonTopic(kafka(), "avro-none-src", 1, made);
    const target = uniqueTopic("avro-none-out");
    const r = await refused(
      `SET autocreate = true; SET output.format = AVRO; INSERT INTO \`${target}\` SELECT STREAM id FROM \`${source}\``,
      `avro-none-${source}`,
    );
    expect(r.status).toBe(400);
    expect(r.message).toContain(`no subject '${target}-value'`);
    const topics = await kafka().topics.list({ includeInternal: true });
    expect(topics.some((t) => t.name === target)).toBe(false);
  });

  test("a schema without a field the program writes, or with a required field it does not write: 400 naming them", async () => {
    const { source, target } = await sourceAndTarget(kafka(), "avro-fit", made);
    await registerSchema(`${target}-value`, OUT_SCHEMA);
    const missing = await refused(
      `SET output.format = AVRO; INSERT INTO \`${target}\` SELECT STREAM id, name AS label, extra FROM \`${source}\``,
      `avro-fit-a-${source}`,
    );
    expect(missing.status).toBe(400);
    expect(missing.message).toContain("has no field 'extra'");
    const unset = await refused(
      `SET output.format = AVRO; INSERT INTO \`${target}\` SELECT STREAM id FROM \`${source}\``,
      `avro-fit-b-${source}`,
    );
    expect(unset.status).toBe(400);
    expect(unset.message).toContain("does not write 'label'");
    // `*` writes the input's bytes: no schema is needed.
    expect(
      (await refused(`SET output.format = AVRO; INSERT INTO \`${target}\` SELECT STREAM * FROM \`${source}\``, `avro-fit-c-${source}`))
        .status,
    ).toBe(200);
  });

  test("a schema that is not a record: 400", async () => {
    const { source, target } = await sourceAndTarget(kafka(), "avro-rec", made);
    await registerSchema(`${target}-value`, { type: "string" } as object);
    const r = await refused(
      `SET output.format = AVRO; INSERT INTO \`${target}\` SELECT STREAM id FROM \`${source}\``,
      `avro-rec-${source}`,
    );
    expect(r.status).toBe(400);
    expect(r.message).toContain("is a string, not a record");
  });
});
