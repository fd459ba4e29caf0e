/**
 * Shared by the query execution tests: a runtime with the real registry configured, topics made
 * and removed per file, records produced in small batches (so push-down can be seen in what is
 * fetched), and readers of both answer forms.
 */

import { afterAll, beforeAll } from "bun:test";
import type { Role } from "../../src/config/schema.ts";
import type { FinishedQuery } from "../../src/domains/sql/service.ts";
import { DecoderFactory } from "../../src/engine/decoders.ts";
import { executeQuery, type QueryEvent } from "../../src/engine/executor.ts";
import type { RecordText } from "../../src/engine/record-text.ts";
import type { ProduceRecord } from "../../src/kafka/index.ts";
import { registryEnv, uniqueTopic } from "../cluster/cluster.ts";
import { type TestRuntime, testRuntime } from "../helpers/runtime.ts";

export interface Fixture {
  rt: TestRuntime;
  topic(prefix: string, partitions?: number): Promise<string>;
  /** Produces in requests of `chunk` records, so each partition gets batches of at most that many. */
  produce(topic: string, records: ProduceRecord[], chunk?: number): Promise<void>;
  /**
   * Runs `sql` through the executor itself, on the test broker with the default decoders,
   * writing to `sink` and reading time from `now` (a clock the test moves): the events' types in
   * order, the answer's text and the end record.
   */
  execute(
    sql: string,
    sink: RecordText,
    now: () => number,
  ): Promise<{ types: QueryEvent["type"][]; text: string; end?: Record<string, unknown> }>;
}

export function sqlFixture(raw: Record<string, unknown> = {}): Fixture {
  const created: string[] = [];
  const f = { created } as unknown as Fixture & { created: string[] };
  beforeAll(async () => {
    f.rt = await testRuntime({ sql: { schemaRegistry: { urls: registryEnv().urls }, ...(raw.sql as object) }, ...raw });
  });
  afterAll(async () => {
    await f.rt.dispose({ topics: created });
  });
  f.topic = async (prefix, partitions = 1) => {
    const name = uniqueTopic(`sqlx-${prefix}`);
    await f.rt.kafka.default().topics.create({ name, partitions, replication: 1 });
    created.push(name);
    return name;
  };
  f.produce = async (topic, records, chunk = 10) => {
    const kafka = f.rt.kafka.default();
    for (let i = 0; i < records.length; i += chunk) await kafka.writes.produce(topic, records.slice(i, i + chunk));
  };
  f.execute = async (sql, sink, now) => {
    const compiled = await f.rt.sql.compile(sql, "local");
    const factory = new DecoderFactory({ registry: null });
    const deps = {
      cluster: f.rt.kafka.default(),
      keyDecoder: factory.create(undefined, undefined, "key"),
      valueDecoder: factory.create(undefined, undefined, "value"),
    };
    const out: { types: QueryEvent["type"][]; text: string; end?: Record<string, unknown> } = { types: [], text: "" };
    for await (const ev of executeQuery(deps, compiled.plan, { signal: new AbortController().signal, sink, now })) {
      out.types.push(ev.type);
      if (ev.type === "records") out.text += new TextDecoder().decode(ev.bytes);
      else if (ev.type === "end") out.end = { ...ev.end };
    }
    return out;
  };
  return f;
}

export const q = (sql: string, extra: Record<string, string> = {}) => `/api/sql/data?${new URLSearchParams({ sql, ...extra }).toString()}`;

export interface StreamLine {
  type: number;
  body: any;
  raw: string;
}

/** Every line of an event stream answer, parsed: `data:<digit><json>`. */
export function parseStream(text: string): StreamLine[] {
  const lines = text.split("\n").filter((l) => l !== "");
  return lines.map((raw) => {
    if (!raw.startsWith("data:")) throw new Error(`line without data: ${raw}`);
    const type = Number(raw[5]);
    const rest = raw.slice(6);
    return { type, body: rest === "" ? null : JSON.parse(rest), raw };
  });
}

export async function stream(rt: TestRuntime, sql: string, opts: { role?: Role; params?: Record<string, string> } = {}) {
  const res = await rt.request(q(sql, opts.params), {
    role: opts.role ?? "read",
    headers: { accept: "application/json, text/event-stream" },
  });
  const text = await res.text();
  const lines = res.status === 200 ? parseStream(text) : [];
  return {
    res,
    text,
    lines,
    records: lines.filter((l) => l.type === 1).map((l) => l.body),
    end: lines.find((l) => l.type === 2)?.body,
    error: lines.find((l) => l.type === 3)?.body,
    stats: lines.filter((l) => l.type === 4).map((l) => l.body),
  };
}

/** Reads a stream until a record line arrived; answers the text read so far. */
export async function untilRecord(reader: { read(): Promise<{ value?: Uint8Array; done?: boolean }> }): Promise<string> {
  let text = "";
  while (!text.includes("data:1")) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  return text;
}

export async function json(rt: TestRuntime, sql: string, role: Role = "read") {
  const res = await rt.request(q(sql), { role, headers: { accept: "application/json" } });
  return { res, body: (await res.json()) as any };
}

/** The next finished query of the runtime (push-down assertions read what it fetched). */
export function nextFinished(rt: TestRuntime): Promise<FinishedQuery> {
  return new Promise((resolve) => {
    const off = rt.sql.onFinished((q) => {
      off();
      resolve(q);
    });
  });
}

/** Runs a streamed query and answers it with what its read fetched. */
export async function streamWithScan(rt: TestRuntime, sql: string, params: Record<string, string> = {}) {
  const finished = nextFinished(rt);
  const out = await stream(rt, sql, { params });
  return { ...out, finished: await finished };
}

export const jsonRecords = (n: number, f: (i: number) => unknown) =>
  Array.from({ length: n }, (_, i) => ({ key: `k${i}`, value: JSON.stringify(f(i)) }));
