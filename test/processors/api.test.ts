// @postgres
/**
 * The processor routes against the real broker: create (the clients' answer shapes), state,
 * output exactly once, pause and resume, scaling while records flow, rights, audit, the error
 * policies, and delete.
 */
import { describe, expect, test } from "bun:test";
import { errorOf, ROLE_USERS } from "../helpers/runtime.ts";
import { pollFor } from "../helpers/wait.ts";
import {
  action,
  createProcessor,
  getProcessor,
  jsonTopic,
  outputOf,
  processorFixture,
  produce,
  readAll,
  sourceAndTarget,
  untilState,
} from "./helpers.ts";

const f = processorFixture();
const { kafka, made } = f;
const orders = (from: number, to: number, partitions: number) =>
  Array.from({ length: to - from }, (_, i) => {
    const n = from + i;
    return { key: `o${n}`, value: { n, customer: `c${n % 5}`, amount: n % 7 }, partition: n % partitions };
  });

describe("creating a processor", () => {
  test("answers 200 with the bare lsql_ id as text; it runs, and its output holds each matching record once", async () => {
    const source = await jsonTopic(kafka(), "orders", 3, made);
    const target = `${source}-big`;
    made.push(target);
    await produce(kafka(), source, orders(0, 300, 3));
    const sql = ` SET autocreate=true; INSERT INTO \`${target}\` SELECT STREAM n, amount * 2 AS doubled, customer AS _key FROM \`${source}\` WHERE amount >= 5`;
    const id = await createProcessor(f.rt(), `big-${source}`, sql);
    expect(id).toMatch(/^lsql_[0-9a-f]+$/);
    const p = await untilState(f.rt(), id, "RUNNING");
    expect(p).toMatchObject({
      id,
      name: `big-${source}`,
      runners: 1,
      sql,
      toTopic: target,
      fromTopics: [source],
      toTopics: [target],
      pipeline: `big-${source}`,
    });
    expect(Object.values(p.runnerState)).toEqual([{ id: `${id}-0`, worker: expect.any(String), state: "RUNNING", errorMsg: "" }]);
    // autocreate: the target has the source's partition count.
    const [described] = await kafka().topics.describe([target]);
    expect(described!.partitionDetails).toHaveLength(3);
    const expected = orders(0, 300, 3).filter((o) => o.value.amount >= 5);
    const out = await outputOf(kafka(), target, expected.length);
    expect(out.map((r) => r.value as { n: number }).sort((a, b) => a.n - b.n)).toEqual(
      expected.map((o) => ({ n: o.value.n, doubled: o.value.amount * 2 })),
    );
    expect(out.every((r) => r.key === `c${(r.value as { n: number }).n % 5}`)).toBe(true);
    await produce(kafka(), source, orders(300, 600, 3));
    const more = orders(0, 600, 3).filter((o) => o.value.amount >= 5);
    await outputOf(kafka(), target, more.length);
    await pollFor("figures counted", async () => (await getProcessor(f.rt(), id)).figures.recordsIn === 600, 30_000);
    const after = await getProcessor(f.rt(), id);
    expect(after.figures).toMatchObject({ recordsIn: 600, recordsOut: more.length, failed: 0 });
    expect((await readAll(kafka(), target)).length).toBe(more.length);
  }, 120_000);

  test("/metrics has each processor's figures and state, labelled with its id, name and consumer group", async () => {
    const { source, target } = await sourceAndTarget(kafka(), "metered", made);
    await produce(kafka(), source, orders(0, 50, 1));
    const id = await createProcessor(f.rt(), `metered-${source}`, `INSERT INTO \`${target}\` SELECT STREAM n FROM \`${source}\``);
    await outputOf(kafka(), target, 50);
    const p = await pollFor("figures counted", async () => {
      const got = await getProcessor(f.rt(), id);
      return got.figures.recordsIn === 50 ? got : undefined;
    });
    const labels = `processor="${id}",name="metered-${source}",consumerGroup="${p.consumerGroup}"`;
    const text = await (await f.rt().request("/metrics")).text();
    expect(text).toContain(`loupe_processor_records_in_total{${labels}} 50`);
    expect(text).toContain(`loupe_processor_records_out_total{${labels}} 50`);
    expect(text).toContain(`loupe_processor_failed_records_total{${labels}} 0`);
    expect(text).toContain(`loupe_processor_state{${labels},state="RUNNING"} 1`);
  }, 60_000);

  test("the list has the shapes the Go client decodes: targets an array, integers where it wants them", async () => {
    const { source, target } = await sourceAndTarget(kafka(), "listed", made);
    await createProcessor(f.rt(), `listed-${source}`, `INSERT INTO \`${target}\` SELECT STREAM * FROM \`${source}\``);
    const res = await f.rt().request("/api/streams", { role: "nodata" });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { targets: unknown[]; streams: Array<Record<string, unknown>> };
    expect(body.targets).toEqual([{ cluster: "local", version: null, namespaces: [] }]);
    expect(body.streams.length).toBeGreaterThan(0);
    for (const s of body.streams) {
      expect(Number.isInteger(s.uptime)).toBe(true);
      expect(Number.isInteger(s.startTs)).toBe(true);
      expect(typeof s.deploymentState).toBe("string");
      expect(typeof s.topicValueDecoder).toBe("string");
    }
  });

  test("Accept: application/json gets the processor; clusterName, namespace and pipeline are kept", async () => {
    const { source, target } = await sourceAndTarget(kafka(), "orders", made);
    const res = await f.rt().request("/api/streams", {
      method: "POST",
      role: "write",
      headers: { accept: "application/json" },
      body: JSON.stringify({
        name: `json-${source}`,
        sql: `INSERT INTO \`${target}\` SELECT STREAM * FROM \`${source}\``,
        runners: 0,
        clusterName: "dev",
        namespace: "ns",
        pipeline: "1",
      }),
    });
    expect(res.status).toBe(200);
    const p = (await res.json()) as Record<string, unknown>;
    expect(p).toMatchObject({ name: `json-${source}`, runners: 1, clusterName: "dev", namespace: "ns", pipeline: "1" });
    expect(p.id).toMatch(/^lsql_/);
  });

  test.each([
    ["an unknown source", (s: string, t: string) => `INSERT INTO \`${t}\` SELECT STREAM * FROM \`${s}-nope\``, /Unknown topic/],
    [
      "a missing target without autocreate",
      (s: string, t: string) => `INSERT INTO \`${t}-nope\` SELECT STREAM * FROM \`${s}\``,
      /autocreate/,
    ],
    ["a syntax error", (s: string, t: string) => `INSERT INTO \`${t}\` SELECT STREAM * FORM \`${s}\``, /FORM/],
    ["an aggregate without GROUP BY", (s: string, t: string) => `INSERT INTO \`${t}\` SELECT STREAM COUNT(*) FROM \`${s}\``, /GROUP BY/],
  ])("%s is a 400 with its position, and nothing is created", async (_what, sqlOf, message) => {
    const { source, target } = await sourceAndTarget(kafka(), "bad", made);
    const before = ((await (await f.rt().request("/api/streams", { role: "read" })).json()) as { streams: unknown[] }).streams.length;
    const res = await f.rt().request("/api/streams", {
      method: "POST",
      role: "write",
      body: JSON.stringify({ name: `bad-${source}`, sql: sqlOf(source, target) }),
    });
    expect(res.status).toBe(400);
    const err = await errorOf(res);
    expect(err.message).toMatch(message);
    expect(err.details).toMatchObject({ line: expect.any(Number), column: expect.any(Number) });
    const after = ((await (await f.rt().request("/api/streams", { role: "read" })).json()) as { streams: unknown[] }).streams.length;
    expect(after).toBe(before);
  });

  test("read and nodata may not create (403); a name taken is 409; runners beyond the bound is 400", async () => {
    const { source, target } = await sourceAndTarget(kafka(), "r", made);
    const body = (name: string, runners = 1) =>
      JSON.stringify({ name, sql: `INSERT INTO \`${target}\` SELECT STREAM * FROM \`${source}\``, runners });
    for (const role of ["read", "nodata"] as const) {
      expect((await f.rt().request("/api/streams", { method: "POST", role, body: body(`x-${source}`) })).status).toBe(403);
    }
    expect((await f.rt().request("/api/streams", { method: "POST", role: "write", body: body(`x-${source}`, 1000) })).status).toBe(400);
    expect((await f.rt().request("/api/streams", { method: "POST", role: "write", body: body(`x-${source}`) })).status).toBe(200);
    expect((await f.rt().request("/api/streams", { method: "POST", role: "write", body: body(`x-${source}`) })).status).toBe(409);
  });
});

describe("pause, resume, scale and delete", () => {
  test("pause stops the output; resume goes on; scaling 1 -> 3 -> 1 while records flow writes each record once", async () => {
    const { source, target } = await sourceAndTarget(kafka(), "flow", made, [6, 3]);
    const id = await createProcessor(f.rt(), `flow-${source}`, `INSERT INTO \`${target}\` SELECT STREAM n FROM \`${source}\``);
    await untilState(f.rt(), id, "RUNNING");
    let produced = 0;
    const step = async (n: number) => {
      await produce(kafka(), source, orders(produced, produced + n, 6));
      produced += n;
    };
    await step(600);
    await outputOf(kafka(), target, 600);
    expect((await action(f.rt(), id, "pause")).status).toBe(200);
    const paused = await untilState(f.rt(), id, "PAUSED");
    expect(Object.values(paused.runnerState).map((r) => r.state)).toEqual(["STOPPED"]);
    await step(300);
    // Paused: nothing new is written while it is.
    expect((await readAll(kafka(), target)).length).toBe(600);
    expect((await action(f.rt(), id, "resume")).status).toBe(200);
    await untilState(f.rt(), id, "RUNNING");
    await outputOf(kafka(), target, 900);
    // Resuming a running processor is fine (the Python client does it right after creating).
    expect((await action(f.rt(), id, "resume")).status).toBe(200);
    expect((await action(f.rt(), id, "scale/3")).status).toBe(200);
    await step(600);
    const three = await pollFor("three runners RUNNING", async () => {
      const p = await getProcessor(f.rt(), id);
      return Object.values(p.runnerState).filter((r) => r.state === "RUNNING").length === 3 ? p : undefined;
    });
    expect(three.runners).toBe(3);
    await step(600);
    expect((await action(f.rt(), id, "scale/1")).status).toBe(200);
    await step(600);
    await pollFor("one runner left", async () => Object.keys((await getProcessor(f.rt(), id)).runnerState).length === 1);
    await step(300);
    const out = await outputOf(kafka(), target, produced);
    const ns = out.map((r) => (r.value as { n: number }).n).sort((a, b) => a - b);
    expect(ns).toEqual(Array.from({ length: produced }, (_, i) => i));
  }, 180_000);

  test("only the owner or an admin changes a processor; each change is audited as PROCESSOR", async () => {
    const { source, target } = await sourceAndTarget(kafka(), "own", made);
    const id = await createProcessor(f.rt(), `own-${source}`, `INSERT INTO \`${target}\` SELECT STREAM * FROM \`${source}\``, {
      role: "admin",
    });
    const refused = await action(f.rt(), id, "pause", "write");
    expect(refused.status).toBe(403);
    expect((await errorOf(refused)).message).toContain("owner");
    expect((await action(f.rt(), id, "scale/abc", "admin")).status).toBe(400);
    expect((await action(f.rt(), id, "scale/0", "admin")).status).toBe(400);
    expect((await action(f.rt(), id, "pause", "admin")).status).toBe(200);
    expect((await action(f.rt(), id, "delete", "admin")).status).toBe(200);
    expect((await f.rt().request(`/api/streams/${id}`, { role: "admin" })).status).toBe(404);
    expect((await action(f.rt(), id, "resume", "admin")).status).toBe(404);
    const audit = (await (await f.rt().request("/api/audit?type=PROCESSOR", { role: "admin" })).json()) as Array<Record<string, unknown>>;
    const entries = audit.filter((e) => (e.content as Record<string, string>).id === id);
    // Newest first: the delete, the pause, the creation (the refused pause is an entry without the id).
    const admin = ROLE_USERS.admin.name;
    expect(entries.map((e) => [e.change, (e.content as Record<string, string>).action ?? "", e.userId])).toEqual([
      ["REMOVE", "DELETE", admin],
      ["UPDATE", "PAUSE", admin],
      ["ADD", "", admin],
    ]);
  }, 60_000);
});

describe("error policies", () => {
  test("skip: a record the program cannot read is counted and passed over", async () => {
    const { source, target } = await sourceAndTarget(kafka(), "poison", made);
    await produce(kafka(), source, [{ value: { n: 1 } }, { value: "not json {" }, { value: { n: 3 } }]);
    const id = await createProcessor(
      f.rt(),
      `skip-${source}`,
      `SET _vtype = JSON; INSERT INTO \`${target}\` SELECT STREAM n FROM \`${source}\``,
    );
    const out = await outputOf(kafka(), target, 2);
    expect(out.map((r) => r.value)).toEqual([{ n: 1 }, { n: 3 }]);
    await pollFor("the failed record counted", async () => (await getProcessor(f.rt(), id)).figures.failed === 1, 30_000);
  }, 60_000);

  test("stop: the processor is FAILED naming the record; what came before it is written", async () => {
    const { source, target } = await sourceAndTarget(kafka(), "poison", made);
    await produce(kafka(), source, [{ value: { n: 1 } }, { value: "not json {" }, { value: { n: 3 } }]);
    const id = await createProcessor(
      f.rt(),
      `stop-${source}`,
      `SET error.policy = stop; SET _vtype = JSON; INSERT INTO \`${target}\` SELECT STREAM n FROM \`${source}\``,
    );
    const failed = await untilState(f.rt(), id, "FAILED");
    expect(failed.deploymentErrorMsg).toContain("record 1 of partition 0");
    expect(await readAll(kafka(), target)).toEqual([expect.objectContaining({ value: { n: 1 } })]);
    // The committed offset is the poison record's: resuming fails on it again.
    expect((await action(f.rt(), id, "resume")).status).toBe(200);
    await untilState(f.rt(), id, "FAILED");
  }, 60_000);
});
