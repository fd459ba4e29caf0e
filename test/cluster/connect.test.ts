/**
 * The Kafka Connect cluster test/setup.ts starts (or CONNECT_URL points at): two real workers
 * in distributed mode. It shows what the Connect proxy may rely on: both workers serve the same
 * cluster, the file and MirrorMaker plugins are there, and a killed worker leaves the other
 * serving and comes back into the group.
 */

import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pollFor } from "../helpers/wait.ts";
import {
  type Cluster,
  CONNECT_PLUGINS,
  connectEnv,
  isAlive,
  kafkaBootstrap,
  killService,
  restartService,
  startCluster,
  uniqueTopic,
} from "./cluster.ts";

const { urls } = connectEnv();
const cleanups: (() => Promise<unknown>)[] = [];

afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => {});
});

async function call(url: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: unknown }> {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : null };
}

/** A FileStreamSink connector writing its topic to a temp file; created through `url`. */
async function createSink(url: string): Promise<{ name: string; config: Record<string, string> }> {
  const name = uniqueTopic("connect-sink");
  const file = join(tmpdir(), `${name}.out`);
  cleanups.push(async () => rmSync(file, { force: true }));
  const config = {
    "connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector",
    "tasks.max": "1",
    topics: uniqueTopic("connect-in"),
    file,
  };
  // A worker that is still joining the group answers 409 (rebalance in progress) for a moment.
  await pollFor(`create ${name}`, async () => {
    const res = await call(url, "POST", "/connectors", { name, config });
    if (res.status === 409) return undefined;
    expect(res.status).toBe(201);
    return true;
  });
  return { name, config };
}

async function runningOn(url: string, name: string): Promise<void> {
  await pollFor(`${name} RUNNING through ${url}`, async () => {
    const res = await call(url, "GET", `/connectors/${encodeURIComponent(name)}/status`);
    const status = res.json as { connector?: { state: string }; tasks?: { state: string }[] };
    return res.status === 200 && status.connector?.state === "RUNNING" && status.tasks?.[0]?.state === "RUNNING" ? true : undefined;
  });
}

describe("Kafka Connect cluster", () => {
  test("two workers, both answering", async () => {
    expect(urls).toHaveLength(2);
    for (const url of urls) {
      const res = await call(url, "GET", "/");
      expect(res.status).toBe(200);
      expect((res.json as { version: string }).version).toMatch(/^\d+\.\d+/);
    }
  });

  test("every worker lists the file and MirrorMaker plugins", async () => {
    for (const url of urls) {
      const res = await call(url, "GET", "/connector-plugins");
      expect(res.status).toBe(200);
      const classes = (res.json as { class: string }[]).map((p) => p.class);
      for (const c of CONNECT_PLUGINS) expect(classes).toContain(c);
    }
  });

  test("a connector created through one worker is seen, running, through the other; delete removes it", async () => {
    const [w1, w2] = urls as [string, string];
    const { name, config } = await createSink(w1);
    cleanups.push(() => call(w1, "DELETE", `/connectors/${encodeURIComponent(name)}`));
    const seen = await pollFor(`${name} through worker 2`, async () => {
      const res = await call(w2, "GET", `/connectors/${encodeURIComponent(name)}/config`);
      return res.status === 200 ? res.json : undefined;
    });
    expect(seen).toEqual({ ...config, name });
    await runningOn(w2, name);
    await pollFor(`delete ${name}`, async () => {
      const res = await call(w2, "DELETE", `/connectors/${encodeURIComponent(name)}`);
      return res.status === 409 ? undefined : res.status;
    }).then((status) => expect(status).toBe(204));
    await pollFor(`${name} gone from worker 1`, async () => {
      const res = await call(w1, "GET", "/connectors");
      return (res.json as string[]).includes(name) ? undefined : true;
    });
  }, 60_000);

  test("workers that cannot start fail with their log, and leave nothing running", async () => {
    const error = await startCluster({
      services: ["connect"],
      jvmOpts: ["-XX:+NoSuchJvmOption"],
      given: { KAFKA_BOOTSTRAP: kafkaBootstrap() },
    }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(Error);
    const message = (error as Error).message;
    expect(message).toMatch(/^Kafka Connect \d+\.\d+\.\d+ worker \d \(http:\/\/127\.0\.0\.1:\d+\) exited during start-up; log /);
    expect(message).toContain("Unrecognized VM option 'NoSuchJvmOption'");
    const logPath = /log (\S+):/.exec(message)?.[1];
    expect(logPath && existsSync(logPath)).toBe(false);
  }, 30_000);

  test("a killed worker leaves the other serving the connector, and joins again when restarted", async () => {
    // A Connect cluster of this test (on the run's broker), so the shared one keeps both workers.
    const cluster: Cluster = await startCluster({
      services: ["connect"],
      ownerPid: process.pid,
      given: { KAFKA_BOOTSTRAP: kafkaBootstrap() },
    });
    cleanups.push(() => cluster.stop({ graceMs: 2_000 }));
    const [worker1, worker2] = cluster.connectWorkers;
    const url1 = worker1!.env.CONNECT_URL!;
    const url2 = worker2!.env.CONNECT_URL!;
    const { name } = await createSink(url1);
    await runningOn(url2, name);

    await killService(worker1!);
    expect(isAlive(worker1!.pid)).toBe(false);
    expect((await call(url2, "GET", "/")).status).toBe(200);
    const listed = await call(url2, "GET", "/connectors");
    expect(listed.json).toContain(name);
    // Its task moves to the surviving worker once the dead one's session ends.
    await runningOn(url2, name);

    await restartService(worker1!);
    expect((await call(url1, "GET", "/")).status).toBe(200);
    await pollFor("worker 1 back in the group", async () => {
      const res = await call(url1, "GET", `/connectors/${encodeURIComponent(name)}/status`);
      return res.status === 200 ? true : undefined;
    });
    await pollFor(`delete ${name}`, async () => {
      const res = await call(url1, "DELETE", `/connectors/${encodeURIComponent(name)}`);
      return res.status === 409 ? undefined : res.status;
    }).then((status) => expect(status).toBe(204));
  }, 120_000);
});
