/**
 * Issue 29, processors writing Protobuf (SET output.format = PROTOBUF) against the real broker and
 * the real schema registry: values are written as the first message of the schema registered for
 * the target's values, in the registry's wire format, and read back by Google's Python protobuf; a
 * program whose columns the message cannot hold is refused at creation.
 */
import { describe, expect, test } from "bun:test";
import { registryEnv } from "../cluster/cluster.ts";
import { pythonDecode, registerOrderSchema } from "../helpers/protobuf.ts";
import { createProcessor, outputOf, processorFixture, produce, sourceAndTarget } from "./helpers.ts";

const f = processorFixture({ schemaRegistry: { urls: registryEnv().urls } });
const { kafka, made } = f;

describe("29: Protobuf output", () => {
  test("29: a filter and projection writes the target's registered message in the wire format, read back by Python", async () => {
    const { source, target } = await sourceAndTarget(kafka(), "proto", made);
    const ids = await registerOrderSchema(target);
    await createProcessor(
      f.rt(),
      `proto-${source}`,
      `SET output.format = PROTOBUF; INSERT INTO \`${target}\` SELECT STREAM name AS id, state AS status, amount AS total FROM \`${source}\` WHERE amount > 10`,
    );
    await produce(kafka(), source, [
      { key: "a", value: { name: "o1", state: "PLACED", amount: 5 } },
      { key: "b", value: { name: "o2", state: "SHIPPED", amount: 20 } },
      { key: "c", value: { name: "o3", state: "PLACED", amount: 42 } },
    ]);
    const out = await outputOf(kafka(), target, 2, 30_000, (bytes) => pythonDecode("loupe.test.Order", bytes, true));
    expect(out.map((r) => [r.key, r.value])).toEqual([
      ["b", { id: ids.order, indexes: [0], value: expect.objectContaining({ id: "o2", status: "SHIPPED", total: "20" }) }],
      ["c", { id: ids.order, indexes: [0], value: expect.objectContaining({ id: "o3", status: "PLACED", total: "42" }) }],
    ]);
  }, 60_000);

  test("29: columns the message has no field for are refused at creation", async () => {
    const { source, target } = await sourceAndTarget(kafka(), "proto-bad", made);
    await registerOrderSchema(target);
    const res = await f.rt().request("/api/streams", {
      method: "POST",
      role: "write",
      body: JSON.stringify({
        name: `proto-bad-${source}`,
        sql: `SET output.format = PROTOBUF; INSERT INTO \`${target}\` SELECT STREAM name AS id, colour FROM \`${source}\``,
        runners: 1,
        clusterName: "",
      }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { message: string }).message).toContain("has no field 'colour'");
  });
});
