// @postgres
/**
 * Redrive jobs against the real broker: a dead-letter topic whose records name their topic in
 * Kafka Connect's header, copied back by a scoped owner; the dry run's counts against what the
 * run wrote (read read_committed); a header naming a topic the owner may not write; pause,
 * resume and the rate; the audit entries; bad input.
 */
import { describe, expect, test } from "bun:test";
import type { RedriveDryRun, RedriveJob } from "../../src/domains/redrive/schemas.ts";
import type { KafkaCluster } from "../../src/kafka/index.ts";
import { uniqueTopic } from "../cluster/cluster.ts";
import type { TestRuntime } from "../helpers/runtime.ts";
import { scopedUser, topicGroup } from "../helpers/scoped.ts";
import { pollFor, waitFor } from "../helpers/wait.ts";
import { makeTopic, processorFixture, readAll } from "../processors/helpers.ts";

const f = processorFixture();
const HEADER = "__connect.errors.topic";

async function call<T>(rt: TestRuntime, path: string, init: RequestInit & { token?: string; role?: "admin" | "write" }, status: number) {
  const res = await rt.request(path, init);
  const text = await res.text();
  if (res.status !== status) throw new Error(`${init.method ?? "GET"} ${path}: ${res.status} ${text}`);
  return JSON.parse(text) as T;
}

const create = (rt: TestRuntime, body: unknown, token: string) =>
  call<RedriveJob>(rt, "/api/redrives", { method: "POST", token, body: JSON.stringify(body) }, 201);
const act = (rt: TestRuntime, id: string, action: string, token: string, status = 200) =>
  call<{ state: string }>(rt, `/api/redrives/${id}/${action}`, { method: "PUT", token }, status);
const job = (rt: TestRuntime, id: string) => call<RedriveJob>(rt, `/api/redrives/${id}`, { role: "admin" }, 200);
const until = (rt: TestRuntime, id: string, state: string, timeoutMs = 30_000) =>
  pollFor(`redrive ${id} ${state}`, async () => ((await job(rt, id)).state === state ? job(rt, id) : undefined), timeoutMs);

/** How many records of each `n` a topic holds (read_committed). */
async function ns(kafka: KafkaCluster, topic: string): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  for (const r of await readAll(kafka, topic)) {
    const n = (r.value as { n: number }).n;
    out.set(n, (out.get(n) ?? 0) + 1);
  }
  return out;
}

describe("dead-letter redrive", () => {
  test("29: a header-targeted redrive writes each record to its named topic, exactly what the dry run counted; a topic the owner may not write is refused and counted; audited", async () => {
    const rt = f.rt();
    const kafka = f.kafka();
    const dlq = await makeTopic(kafka, uniqueTopic("rd-dlq"), 2, f.made);
    const [a, b, c] = await Promise.all(["rd-a", "rd-b", "rd-c"].map((p) => makeTopic(kafka, uniqueTopic(p), 2, f.made)));
    // 60 records: a third each for a, b and c (which the owner may not write); every tenth has
    // no header (unroutable); n = 7 is left out by the filter.
    const names = [a!, b!, c!];
    const records = Array.from({ length: 60 }, (_, n) => ({
      key: `k${n}`,
      value: JSON.stringify({ n }),
      partition: n % 2,
      ...(n % 10 === 9 ? {} : { headers: { [HEADER]: names[n % 3]!, "__connect.errors.exception.message": "boom" } }),
    }));
    await kafka.writes.produce(dlq, records);
    const owner = `rd-owner-${process.pid}`;
    const token = await scopedUser(rt, owner, [topicGroup(`rd-writers-${process.pid}`, [dlq, a!, b!], [], ["write"])]);

    // Bad input: a clear 4xx, nothing created.
    const bad = async (body: unknown, status: number, message: RegExp) => {
      const res = await rt.request("/api/redrives", { method: "POST", token, body: JSON.stringify(body) });
      const text = await res.text();
      expect(`${res.status} ${text}`).toMatch(new RegExp(`^${status} .*${message.source}`));
    };
    await bad({ topic: dlq }, 400, /exactly one of target/);
    await bad({ topic: dlq, target: a, targetHeader: HEADER }, 400, /exactly one of target/);
    await bad({ topic: dlq, targetHeader: HEADER, where: "n >" }, 400, /Invalid filter: .*line 1, column 4/);
    await bad({ topic: dlq, targetHeader: HEADER, where: "n > 1 LIMIT 5" }, 400, /a condition only/);
    await bad({ topic: dlq, targetHeader: HEADER, ratePerSecond: 0 }, 400, /ratePerSecond/);
    await bad({ topic: `${dlq}-none`, targetHeader: HEADER }, 403, /outside your scope/);
    await bad({ topic: dlq, target: c }, 403, /outside your scope/);
    await bad({ topic: dlq, target: a, partitions: [9] }, 400, /has no partition 9/);
    await bad({ topic: dlq, target: a, fromOffset: 1, fromTime: 1 }, 400, /fromOffset or fromTime/);
    await bad({ topic: dlq, target: a, extra: true }, 400, /extra/);
    expect((await rt.request("/api/redrives/rdr_none", { token })).status).toBe(404);
    expect((await rt.request("/api/redrives/rdr_none/start", { method: "PUT", token })).status).toBe(404);

    const created = await create(rt, { topic: dlq, targetHeader: HEADER, where: "n <> 7", ratePerSecond: 100_000 }, token);
    expect(created).toMatchObject({ state: "PAUSED", owner, total: 60, done: 0, targetHeader: HEADER });

    const expected = { a: 0, b: 0, c: 0, unroutable: 0 };
    for (let n = 0; n < 60; n++) {
      if (n === 7) continue;
      if (n % 10 === 9) expected.unroutable++;
      else expected[(["a", "b", "c"] as const)[n % 3]!]++;
    }
    const dry = await call<RedriveDryRun>(rt, `/api/redrives/${created.id}/dry-run`, { method: "POST", token }, 200);
    expect(dry.complete).toBe(true);
    expect(dry.counts).toEqual({
      read: 60,
      written: expected.a + expected.b,
      byTarget: { [a!]: expected.a, [b!]: expected.b },
      filtered: 1,
      refused: expected.c,
      refusedByTarget: { [c!]: expected.c },
      unroutable: expected.unroutable,
    });
    expect(dry.sample.length).toBe(10);
    expect(dry.sample.find((s) => s.outcome === "REFUSED")?.target).toBe(c!);
    // The dry run wrote nothing.
    expect((await readAll(kafka, a!)).length).toBe(0);

    expect((await act(rt, created.id, "start", token)).state).toBe("RUNNING");
    const finished = await until(rt, created.id, "DONE");
    expect(finished.counts).toEqual(dry.counts);
    expect(finished.done).toBe(60);
    expect(finished.progress.every((p) => p.done === p.total)).toBe(true);

    const [inA, inB, inC] = await Promise.all(names.map((t) => ns(kafka, t)));
    const want = (i: number) =>
      Array.from({ length: 60 }, (_, n) => n)
        .filter((n) => n !== 7 && n % 10 !== 9 && n % 3 === i)
        .sort((x, y) => x - y);
    expect([...inA!.keys()].sort((x, y) => x - y)).toEqual(want(0));
    expect([...inB!.keys()].sort((x, y) => x - y)).toEqual(want(1));
    expect([...inA!.values(), ...inB!.values()].every((count) => count === 1)).toBe(true);
    expect(inC!.size).toBe(0);
    // Key and headers travel with the record.
    const one = (await readAll(kafka, a!))[0]!;
    expect(one.key).toMatch(/^k\d+$/);

    const entries = (await rt.audit.list({ type: "REDRIVE", limit: 100 })).filter((e) => e.content.id === created.id);
    const seen = entries.map((e) => `${e.userId} ${e.change} ${e.content.action ?? "CREATE"}`).sort();
    expect(seen).toEqual([`${owner} ADD CREATE`, `${owner} UPDATE START`, "loupe UPDATE COMPLETE"].sort());
    const completion = entries.find((e) => e.content.action === "COMPLETE")!;
    expect(completion.content).toMatchObject({
      written: String(expected.a + expected.b),
      refused: String(expected.c),
      filtered: "1",
      unroutable: String(expected.unroutable),
    });

    // Whoever owns the job (an admin here), a header never sends records into Kafka's own topics.
    await kafka.writes.produce(dlq, [{ value: JSON.stringify({ n: 60 }), partition: 0, headers: { [HEADER]: "__consumer_offsets" } }]);
    const admin = await rt.token("admin");
    const adminJob = await create(rt, { topic: dlq, targetHeader: HEADER }, admin);
    const adminDry = await call<RedriveDryRun>(rt, `/api/redrives/${adminJob.id}/dry-run`, { method: "POST", token: admin }, 200);
    expect(adminDry.counts.refusedByTarget).toEqual({ __consumer_offsets: 1 });
    expect(adminDry.counts.byTarget[c!]).toBe(expected.c);
  }, 60_000);

  test("29: pause holds the job where its last transaction left it, resume goes on, the rate limit holds; each record once", async () => {
    const rt = f.rt();
    const kafka = f.kafka();
    const source = await makeTopic(kafka, uniqueTopic("rd-rate-src"), 2, f.made);
    const target = await makeTopic(kafka, uniqueTopic("rd-rate-out"), 3, f.made);
    const total = 2_000;
    await kafka.writes.produce(
      source,
      Array.from({ length: total }, (_, n) => ({ key: `k${n}`, value: JSON.stringify({ n }), partition: n % 2 })),
    );
    const token = await rt.token("write");
    const rate = 1_000;
    const created = await create(rt, { topic: source, target, ratePerSecond: rate }, token);
    await act(rt, created.id, "start", token);
    await pollFor("some records copied", async () => ((await job(rt, created.id)).done >= 300 ? true : undefined), 30_000);
    expect((await act(rt, created.id, "pause", token)).state).toBe("PAUSED");
    // Paused: what it committed is where it is, and it is not done.
    const paused = await job(rt, created.id);
    expect(paused.done).toBeLessThan(total);
    expect((await readAll(kafka, target)).length).toBe(paused.counts.written);

    // The rate over the resumed run. From the resume to DONE it is never faster than the limit
    // (but for the first tenth of a second's burst); from the first progress seen to DONE (the
    // job started: its group joined) it is not much slower.
    const resumedAt = performance.now();
    expect((await act(rt, created.id, "resume", token)).state).toBe("RUNNING");
    let moving: { at: number; done: number } | undefined;
    await waitFor(
      async () => {
        const j = await job(rt, created.id);
        if (moving === undefined && j.done > paused.done && j.done < total) moving = { at: performance.now(), done: j.done };
        return j.state === "DONE" ? true : undefined;
      },
      { what: "the resumed redrive DONE", timeoutMs: 30_000, intervalMs: 20 },
    );
    const doneAt = performance.now();
    const copied = total - paused.done;
    const overall = (copied / (doneAt - resumedAt)) * 1000;
    const running = ((total - moving!.done) / (doneAt - moving!.at)) * 1000;
    console.log(`29 rate: ${Math.round(overall)} records/s from the resume, ${Math.round(running)} while running (limit ${rate})`);
    // At most a tenth of a second's records go at once: the bound of the whole run is that burst more.
    expect(overall).toBeLessThan(((copied + rate / 10) / copied) * rate * 1.02);
    expect(running).toBeGreaterThan(rate * 0.5);

    const counts = await ns(kafka, target);
    expect(counts.size).toBe(total);
    expect([...counts.values()].every((c) => c === 1)).toBe(true);
    // Done is final: no more changes but a 409.
    await act(rt, created.id, "cancel", token, 409);

    // A paused job cancelled stays cancelled; it cannot start again.
    const other = await create(rt, { topic: source, target }, token);
    expect((await act(rt, other.id, "cancel", token)).state).toBe("CANCELLED");
    await act(rt, other.id, "start", token, 409);
    // Another user (not the owner, not an admin) changes nothing.
    const stranger = await scopedUser(rt, `rd-stranger-${process.pid}`, [
      topicGroup(`rd-strangers-${process.pid}`, [source, target], [], ["write"]),
    ]);
    await act(rt, other.id, "pause", stranger, 403);

    // A caller whom masking policies hide fields of the source from can neither copy it nor see a dry run's sample.
    const policy = { name: `rd-mask-${process.pid}`, topics: [source], fields: ["n"], method: "REDACT", roles: ["write"] };
    expect((await rt.request("/api/masking/policies", { method: "POST", role: "admin", body: JSON.stringify(policy) })).status).toBe(201);
    for (const [path, method, body] of [
      ["/api/redrives", "POST", JSON.stringify({ topic: source, target })],
      [`/api/redrives/${other.id}/dry-run`, "POST", undefined],
    ] as const) {
      const res = await rt.request(path, { method, token, ...(body ? { body } : {}) });
      expect(`${res.status} ${await res.text()}`).toMatch(/^400 .*Masking policies hide fields/);
    }
  }, 60_000);

  test("29: a running job whose owner loses write on its target is paused with the reason and audited by loupe; starting it is refused until the access is back", async () => {
    const rt = f.rt();
    const kafka = f.kafka();
    const source = await makeTopic(kafka, uniqueTopic("rd-lose-src"), 1, f.made);
    const target = await makeTopic(kafka, uniqueTopic("rd-lose-out"), 1, f.made);
    await kafka.writes.produce(
      source,
      Array.from({ length: 600 }, (_, n) => ({ value: JSON.stringify({ n }) })),
    );
    const owner = `rd-loser-${process.pid}`;
    const group = `rd-losers-${process.pid}`;
    const token = await scopedUser(rt, owner, [topicGroup(group, [source, target], [], ["write"])]);
    const created = await create(rt, { topic: source, target, ratePerSecond: 100 }, token);
    await act(rt, created.id, "start", token);
    await pollFor("some records copied", async () => ((await job(rt, created.id)).done > 0 ? true : undefined), 30_000);

    const changed = await rt.request(`/api/groups/${group}`, {
      method: "PUT",
      role: "admin",
      body: JSON.stringify({ topics: { allow: [source], deny: [] } }),
    });
    expect(changed.status).toBe(200);
    const reason = `Paused by Loupe: its owner '${owner}' no longer holds write on '${target}'`;
    const paused = await until(rt, created.id, "PAUSED", 15_000);
    expect(paused.reason).toBe(reason);
    expect(paused.done).toBeLessThan(600);
    const audited = (await rt.audit.list({ type: "REDRIVE", limit: 100 })).filter(
      (e) => e.content.id === created.id && e.userId === "loupe" && e.content.action === "PAUSE",
    );
    expect(audited.map((e) => e.content.reason)).toEqual([reason]);
    // Its runner stopped on what it committed: the target holds exactly what it counts as written.
    await pollFor(
      "the runner stopped",
      async () => ((await readAll(kafka, target)).length === (await job(rt, created.id)).counts.written ? true : undefined),
      15_000,
    );
    const refused = await rt.request(`/api/redrives/${created.id}/start`, { method: "PUT", token });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { message: string }).message).toContain(`no longer holds write on '${target}'`);
    expect((await act(rt, created.id, "cancel", token)).state).toBe("CANCELLED");
  }, 60_000);
});
