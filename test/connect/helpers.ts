/** What the Connect proxy's tests share: a Loupe with Connect aliases, honest connectors, polling. */

import type { Role } from "../../src/config/schema.ts";
import { connectEnv, kafkaBootstrap, uniqueTopic } from "../cluster/cluster.ts";
import { type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { pollFor } from "../helpers/wait.ts";

/** The alias of the run's Connect cluster (both workers) in these tests. */
export const ALIAS = "dev";

/** Polls `check` until it returns a value (see pollFor). */
export const eventually = pollFor;

/** A Loupe whose `dev` alias is the run's two workers; `more` adds aliases. */
export function connectRuntime(more: Record<string, unknown>[] = [], connect: Record<string, unknown> = {}): Promise<TestRuntime> {
  return testRuntime({
    connect: { clusters: [{ alias: ALIAS, ...connectEnv() }, ...more], timeout: "20s", grace: "2s", ...connect },
  });
}

/**
 * An honest connector: MirrorMaker's heartbeat connector from the test broker to itself, one
 * task, heartbeats once a minute. `extra` adds keys (a secret to mask).
 */
export function heartbeatConfig(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    "connector.class": "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector",
    "source.cluster.alias": "loupe-src",
    "target.cluster.alias": "loupe-dst",
    "source.cluster.bootstrap.servers": kafkaBootstrap(),
    "target.cluster.bootstrap.servers": kafkaBootstrap(),
    "heartbeats.topic.replication.factor": "1",
    "emit.heartbeats.interval.seconds": "60",
    "tasks.max": "1",
    ...extra,
  };
}

/** A connector name no other test uses; `prefix` may hold spaces. */
export const connectorName = (prefix = "loupe hb") => `${prefix} ${uniqueTopic("c").slice(2)}`;

export const enc = encodeURIComponent;

/** `/api/proxy-connect/<alias><rest>`. */
export const proxy = (rest: string, alias = ALIAS) => `/api/proxy-connect/${alias}${rest}`;

/**
 * Connect's 409 (and 500) messages while its workers rebalance (not "already exists"), and its
 * 500 "Failed to start connector" when a restart meets the start that a resume just began.
 */
export const REBALANCING = /rebalanc|conflicting operation|stale configuration|momentarily|failed to start connector/i;

/**
 * Sends through Loupe, retrying while Connect answers 409 (a rebalance under way: the tests'
 * own connector changes cause them) and returns the first other answer.
 */
export async function settled(rt: TestRuntime, path: string, init: RequestInit & { role?: Role; token?: string } = {}): Promise<Response> {
  return eventually(`${init.method ?? "GET"} ${path} past a rebalance`, async () => {
    const res = await rt.request(path, init);
    if (res.status !== 409 && res.status !== 500) return res;
    const body = await res.clone().text();
    return REBALANCING.test(body) ? undefined : res;
  });
}

/** Creates a heartbeat connector through Loupe as `role` (201), or throws. */
export async function createHeartbeat(rt: TestRuntime, name: string, extra: Record<string, unknown> = {}, role: Role = "write") {
  const res = await settled(rt, proxy("/connectors"), {
    method: "POST",
    role,
    body: JSON.stringify({ name, config: heartbeatConfig(extra) }),
  });
  if (res.status !== 201) throw new Error(`create ${name}: ${res.status} ${await res.text()}`);
  return (await res.json()) as { name: string; config: Record<string, string>; tasks: unknown[]; type: string | null };
}

/**
 * Deletes through the workers directly (cleanup: whatever a test left), ignoring failures. Each
 * worker in turn: one that forwards to the leader cuts a name at `;`, the leader does not.
 */
export async function deleteDirect(name: string, urls = connectEnv().urls): Promise<void> {
  await eventually(
    `delete ${name}`,
    async () => {
      for (const url of urls) {
        const res = await fetch(`${url}/connectors/${enc(name)}`, { method: "DELETE", signal: AbortSignal.timeout(10_000) });
        await res.arrayBuffer();
        if (res.status === 409) return undefined;
        if (res.status === 204) return true;
      }
      return true;
    },
    20_000,
  ).catch(() => {});
}

/** Waits until the connector and its first task are RUNNING, as seen through Loupe. */
export async function runningThrough(rt: TestRuntime, name: string, alias = ALIAS): Promise<void> {
  await eventually(`${name} RUNNING`, async () => {
    const res = await rt.request(proxy(`/connectors/${enc(name)}/status`, alias), { role: "nodata" });
    if (res.status !== 200) return undefined;
    const s = (await res.json()) as { connector: { state: string }; tasks: { state: string }[] };
    return s.connector.state === "RUNNING" && s.tasks[0]?.state === "RUNNING" ? true : undefined;
  });
}

/** Audit entries of type CONNECTOR (or `type`), newest first, read as the admin through the API. */
export async function auditEntries(rt: TestRuntime, type = "CONNECTOR") {
  const res = await rt.request(`/api/audit?type=${type}&limit=200`, { role: "admin" });
  return (await res.json()) as { type: string; change: string; userId: string; content: Record<string, string> }[];
}
