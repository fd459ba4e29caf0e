/**
 * Failures the evaluation raises beyond the SPEC, on the run's real Connect workers and
 * processors: a connector whose task fails at start (the file sink told to write into a
 * directory that does not exist) raises 3002, delivered once to a webhook and resolved when the
 * connector goes; a connector the auto-restart policy names is restarted at most its budget,
 * each restart audited; a processor that cannot write its output raises 5000.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connectEnv, uniqueTopic } from "../cluster/cluster.ts";
import { ALIAS, auditEntries, deleteDirect, enc, proxy, settled } from "../connect/helpers.ts";
import { type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { waitFor } from "../helpers/wait.ts";
import { waitForLeaders } from "../kafka/helpers.ts";
import { createProcessor } from "../processors/helpers.ts";

/** A webhook receiver that keeps each delivery it accepts (status, instance, delivery id). */
function webhookReceiver() {
  const accepted: { delivery: string; status: string; alertId: number; instance: string }[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const body = (await req.json()) as { status: string; notification: { alertId: number; labels: Record<string, string> } };
      accepted.push({
        delivery: req.headers.get("x-loupe-delivery") ?? "",
        status: body.status,
        alertId: body.notification.alertId,
        instance: body.notification.labels.instance!,
      });
      return new Response("ok");
    },
  });
  return { url: `http://127.0.0.1:${server.port}/hook`, accepted, stop: () => server.stop(true) };
}

const RESTART_BUDGET = 2;
let rt: TestRuntime;
let hook: ReturnType<typeof webhookReceiver>;
const connectors: string[] = [];
const topics: string[] = [];

beforeAll(async () => {
  hook = webhookReceiver();
  rt = await testRuntime({
    connect: { clusters: [{ alias: ALIAS, ...connectEnv() }], timeout: "20s", grace: "2s" },
    processors: { failAfter: 1_500 },
    alerts: {
      evaluationInterval: 500,
      initialBackoff: 50,
      maxBackoff: 300,
      webhooks: [{ name: "chat", url: hook.url, alerts: [3001, 3002, 5000] }],
      connectorRestarts: { enabled: true, max: RESTART_BUDGET, window: "1h", connectors: ["alerts-restarted-*"] },
    },
  });
});
afterAll(async () => {
  for (const name of connectors) await deleteDirect(name);
  await rt?.dispose({ topics });
  hook?.stop();
}, 60_000);

interface Notification {
  alertId: number;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  endsAt: string | null;
}

async function notificationsOf(alertId: number, instance: string): Promise<Notification[]> {
  const res = await rt.request(`/api/alerts?alertId=${alertId}&limit=10000`, { role: "read" });
  expect(res.status).toBe(200);
  return ((await res.json()) as Notification[]).filter((n) => n.labels.instance === instance);
}

/** The active ones, or null while there is none (for waitFor). */
const active = (list: Notification[]): Notification[] | null => {
  const on = list.filter((n) => n.endsAt === null);
  return on.length > 0 ? on : null;
};

/** Resolves after `n` more evaluation passes. */
async function passes(n: number): Promise<void> {
  const seen = new Set<number>();
  const lastRun = () => rt.background.status().find((j) => j.name === "alert-evaluation")?.lastRunAt ?? 0;
  const from = lastRun();
  await waitFor(
    () => {
      const at = lastRun();
      if (at > from) seen.add(at);
      return seen.size >= n;
    },
    { timeoutMs: 30_000, what: `${n} evaluation passes` },
  );
}

/** A file sink whose task fails at start: its file's directory does not exist on the workers. */
async function failingSink(name: string): Promise<void> {
  connectors.push(name);
  const config = {
    "connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector",
    topics: uniqueTopic("alerts-sink"),
    file: `/nonexistent-loupe-${crypto.randomUUID()}/out.txt`,
    "tasks.max": "1",
  };
  // The file sink is on the guard rails' deny list: an admin may create it.
  const res = await settled(rt, proxy("/connectors"), { method: "POST", role: "admin", body: JSON.stringify({ name, config }) });
  expect(res.status).toBe(201);
}

describe("connectors (3001, 3002)", () => {
  test("a task that fails at start raises 3002 once, delivered once to the webhook; resolved once the connector is deleted", async () => {
    const name = `alerts-failing-${uniqueTopic("c").slice(2)}`;
    await failingSink(name);
    const instance = `${ALIAS}/${name}/0`;
    const [raised] = await waitFor(async () => active(await notificationsOf(3002, instance)), {
      timeoutMs: 60_000,
      what: "3002 raised for the failed task",
    });
    expect(raised!.labels).toMatchObject({
      alertname: "ConnectorTaskFailed",
      category: "Connect",
      connector: name,
      task: "0",
      cluster: "local",
    });
    expect(raised!.annotations.summary).toMatch(/^Task 0 of connector .* has FAILED: .*ConnectException: Couldn't find or create file/);
    // The connector itself runs: only its task failed.
    expect(await notificationsOf(3001, `${ALIAS}/${name}`)).toEqual([]);
    const firing = () => hook.accepted.filter((d) => d.instance === instance && d.status === "firing");
    await waitFor(() => firing().length === 1, { what: "the webhook got the alert" });
    // Still failed over the next passes: raised once, sent once.
    await passes(4);
    expect(firing().length).toBe(1);
    expect(await notificationsOf(3002, instance)).toHaveLength(1);

    const deleted = await settled(rt, proxy(`/connectors/${enc(name)}`), { method: "DELETE", role: "admin" });
    expect(deleted.status).toBe(204);
    await waitFor(async () => (await notificationsOf(3002, instance)).every((n) => n.endsAt !== null), {
      timeoutMs: 30_000,
      what: "3002 resolved",
    });
    await waitFor(() => hook.accepted.filter((d) => d.instance === instance && d.status === "resolved").length === 1, {
      what: "the webhook got the resolution",
    });
    expect(firing().length).toBe(1);
  }, 90_000);

  test(`a failed connector the policy names is restarted at most ${RESTART_BUDGET} times, each audited; another one is not`, async () => {
    const name = `alerts-restarted-${uniqueTopic("c").slice(2)}`;
    await failingSink(name);
    const restarts = async () =>
      (await auditEntries(rt)).filter((e) => e.userId === "loupe" && e.content.connector === name && e.content.action === "restart");
    const audited = await waitFor(async () => ((await restarts()).length >= RESTART_BUDGET ? await restarts() : null), {
      timeoutMs: 60_000,
      what: `${RESTART_BUDGET} restarts audited`,
    });
    expect(audited[0]).toMatchObject({ type: "CONNECTOR", change: "UPDATE" });
    expect(audited[0]!.content).toMatchObject({ alias: ALIAS, onlyFailed: "true", outcome: "SUCCESS" });
    expect(audited[0]!.content.reason).toMatch(/^task 0 FAILED: .*ConnectException/);
    // The budget is spent: it fails on, alerted, and is restarted no more.
    await passes(4);
    expect(await restarts()).toHaveLength(RESTART_BUDGET);
    await waitFor(async () => (await notificationsOf(3002, `${ALIAS}/${name}/0`)).some((n) => n.endsAt === null), {
      what: "3002 active after the restarts",
    });
    // The connector of the first test (not named by the policy) was never restarted.
    expect((await auditEntries(rt)).filter((e) => e.userId === "loupe" && e.content.connector?.startsWith("alerts-failing-"))).toEqual([]);
  }, 90_000);
});

describe("processors (5000)", () => {
  test("a processor that cannot write its output raises 5000 once it is FAILED, delivered once to the webhook; resolved once deleted", async () => {
    const kafka = rt.kafka.default();
    const source = uniqueTopic("alerts-proc-src");
    // Larger than every batch of output: each write fails, and the processor is FAILED after processors.failAfter.
    const target = `${source}-out`;
    await kafka.topics.create({ name: source, partitions: 1, replication: 1 });
    await kafka.topics.create({ name: target, partitions: 1, replication: 1, configs: { "max.message.bytes": "120" } });
    topics.push(source, target);
    await waitForLeaders(kafka, source, 1, 30_000);
    await waitForLeaders(kafka, target, 1, 30_000);
    await kafka.writes.produce(source, [{ key: "k", value: JSON.stringify({ n: 1, pad: "p".repeat(300) }) }]);
    const name = `alerts-proc-${source.slice(-8)}`;
    const id = await createProcessor(rt, name, `INSERT INTO \`${target}\` SELECT STREAM * FROM \`${source}\``);
    const [raised] = await waitFor(async () => active(await notificationsOf(5000, name)), {
      timeoutMs: 60_000,
      what: "5000 raised",
    });
    expect(raised!.labels).toMatchObject({ alertname: "ProcessorFailed", category: "Processors", processor: id, cluster: "local" });
    expect(raised!.annotations.summary).toContain("larger than the max message size");
    await waitFor(() => hook.accepted.filter((d) => d.instance === name && d.status === "firing").length === 1, {
      what: "the webhook got the alert",
    });

    expect((await rt.request(`/api/streams/${id}`, { method: "DELETE", role: "write" })).status).toBe(200);
    await waitFor(async () => (await notificationsOf(5000, name)).every((n) => n.endsAt !== null), {
      timeoutMs: 30_000,
      what: "5000 resolved",
    });
    expect(hook.accepted.filter((d) => d.instance === name && d.status === "firing")).toHaveLength(1);
  }, 90_000);
});
