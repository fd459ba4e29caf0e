/**
 * Delivery of notifications to a real Alertmanager (Debian's, started here so the test may kill
 * it) and to a webhook (a local HTTP server that counts what it accepts): the labels
 * Alertmanager holds, the resolution, a channel that is down getting everything when it
 * returns, and Loupe killed with SIGKILL while a delivery is pending sending it once after
 * its restart.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { type Cluster, killService, restartService, startCluster } from "../cluster/cluster.ts";
import { type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { startServerProcess } from "../helpers/server-process.ts";
import { waitFor } from "../helpers/wait.ts";

const SECRET = "webhook-secret-0123456789";

interface AmAlert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  generatorURL: string;
  startsAt: string;
  endsAt: string;
  status: { state: string };
}

interface Notification {
  id: string;
  alertId: number;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  endsAt: string | null;
  generatorURL: string;
}

interface DeliveryRow {
  notification: string;
  channel: string;
  state: string;
  attempts: number;
  lastError: string | null;
}

/** A webhook receiver: refuses (503) while `down`, else counts each accepted delivery by its id. */
function webhookReceiver() {
  const accepted: { delivery: string; status: string; instance: string; signed: boolean }[] = [];
  const state = { down: false, refused: 0 };
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const body = await req.text();
      if (state.down) {
        state.refused++;
        return new Response("down", { status: 503 });
      }
      const parsed = JSON.parse(body) as { status: string; notification: Notification };
      const signed = req.headers.get("x-loupe-signature") === `sha256=${createHmac("sha256", SECRET).update(body).digest("hex")}`;
      accepted.push({
        delivery: req.headers.get("x-loupe-delivery") ?? "",
        status: parsed.status,
        instance: parsed.notification.labels.instance!,
        signed,
      });
      return new Response("ok");
    },
  });
  return { url: `http://127.0.0.1:${server.port}/hook`, accepted, state, stop: () => server.stop(true) };
}

let am: Cluster;
let amUrl: string;
let hook: ReturnType<typeof webhookReceiver>;
let rt: TestRuntime;

const fast = { initialBackoff: 50, maxBackoff: 300, resendInterval: 60_000, evaluationInterval: 0 };

beforeAll(async () => {
  am = await startCluster({ services: ["alertmanager"], ownerPid: process.pid });
  amUrl = am.env.ALERTMANAGER_URL!;
  hook = webhookReceiver();
  rt = await testRuntime({ alerts: { ...fast, alertmanagers: [amUrl], webhooks: [{ name: "hook", url: hook.url, secret: SECRET }] } });
});
afterAll(async () => {
  await rt?.dispose();
  hook?.stop();
  await am?.stop({ graceMs: 1_000 });
});

async function amAlerts(url: string, instance: string): Promise<AmAlert[]> {
  const res = await fetch(`${url}/api/v2/alerts?filter=${encodeURIComponent(`instance="${instance}"`)}`);
  expect(res.status).toBe(200);
  return (await res.json()) as AmAlert[];
}

/** The Go CLI's POST /api/alerts: severity lower case (upper-cased by Loupe too), endsAt "" when unset. */
function goAlert(instance: string, endsAt = ""): string {
  return JSON.stringify({
    alertId: 2000,
    labels: { severity: "high", category: "Consumers", instance },
    annotations: { summary: `lag on ${instance}`, source: "ops-script", docs: "https://runbooks.example/lag" },
    startsAt: new Date().toISOString(),
    endsAt,
  });
}

async function deliveriesOf(request: (p: string) => Promise<Response>, id: string): Promise<DeliveryRow[]> {
  const res = await request("/api/alerts/deliveries?limit=10000");
  expect(res.status).toBe(200);
  return ((await res.json()) as DeliveryRow[]).filter((d) => d.notification === id);
}

describe("Alertmanager", () => {
  test("a notification raised through Loupe is in Alertmanager with its labels, annotations and generatorURL; resolved with endsAt", async () => {
    const instance = `g-${crypto.randomUUID().slice(0, 8)}/orders`;
    const raised = await rt.request("/api/alerts", { method: "POST", role: "write", body: goAlert(instance) });
    expect(raised.status).toBe(200);
    const n = (await raised.json()) as Notification;
    expect(n.endsAt).toBeNull();
    expect(n.labels).toMatchObject({ alertname: "ConsumerLag", severity: "HIGH", category: "Consumers", instance, cluster: "local" });
    const [inAm] = await waitFor(
      async () => {
        const found = await amAlerts(amUrl, instance);
        return found.length === 1 ? found : null;
      },
      { timeoutMs: 15_000, what: "the alert in Alertmanager" },
    );
    expect(inAm!.labels).toEqual({ alertname: "ConsumerLag", severity: "HIGH", category: "Consumers", instance, cluster: "local" });
    expect(inAm!.annotations).toEqual({ summary: `lag on ${instance}`, source: "ops-script", docs: "https://runbooks.example/lag" });
    expect(inAm!.generatorURL).toBe(n.generatorURL);
    expect(n.generatorURL).toContain(`/alerts?id=${n.id}`);
    expect(inAm!.status.state).toBe("active");
    // Listed by Loupe, active.
    const active = (await (await rt.request("/api/alerts?state=active&category=Consumers", { role: "read" })).json()) as Notification[];
    expect(active.some((a) => a.id === n.id)).toBe(true);

    // The end: the same labels with an endsAt resolve it, in Loupe and in Alertmanager.
    const ended = new Date().toISOString();
    const resolved = await rt.request("/api/alerts", { method: "POST", role: "write", body: goAlert(instance, ended) });
    expect(resolved.status).toBe(200);
    const r = (await resolved.json()) as Notification;
    expect(r.id).toBe(n.id);
    expect(Date.parse(r.endsAt!)).toBe(Date.parse(ended));
    await waitFor(
      async () => (await amAlerts(amUrl, instance)).every((a) => a.status.state !== "active" || Date.parse(a.endsAt) <= Date.now()),
      {
        timeoutMs: 15_000,
        what: "the alert resolved in Alertmanager",
      },
    );
    const rows = await waitFor(async () => {
      const d = await deliveriesOf((p) => rt.request(p, { role: "read" }), n.id);
      return d.length === 2 && d.every((x) => x.state === "SENT") ? d : null;
    });
    expect(rows.map((x) => x.channel).sort()).toEqual([`alertmanager:${amUrl}`, "webhook:hook"]);
    const listedResolved = (await (await rt.request("/api/alerts?state=resolved&alertId=2000", { role: "read" })).json()) as Notification[];
    expect(listedResolved.find((a) => a.id === n.id)?.endsAt).not.toBeNull();
  });

  test("Alertmanager stopped while an alert is raised gets it when it is back; the delivery shows PENDING with the error meanwhile", async () => {
    const proc = am.services[0]!;
    await killService(proc);
    try {
      const instance = `down-${crypto.randomUUID().slice(0, 8)}/orders`;
      const n = (await (
        await rt.request("/api/alerts", { method: "POST", role: "write", body: goAlert(instance) })
      ).json()) as Notification;
      const pending = await waitFor(
        async () => {
          const d = (await deliveriesOf((p) => rt.request(p, { role: "read" }), n.id)).find((x) => x.channel.startsWith("alertmanager:"));
          return d && d.attempts >= 2 ? d : null;
        },
        { timeoutMs: 15_000, what: "failed attempts to the stopped Alertmanager" },
      );
      expect(pending.state).toBe("PENDING");
      expect(pending.lastError).toBeTruthy();
      await restartService(proc);
      const found = await waitFor(
        async () => {
          const a = await amAlerts(amUrl, instance);
          return a.length === 1 ? a : null;
        },
        { timeoutMs: 15_000, what: "the alert in the restarted Alertmanager" },
      );
      expect(found[0]!.labels.alertname).toBe("ConsumerLag");
      await waitFor(async () => (await deliveriesOf((p) => rt.request(p, { role: "read" }), n.id)).every((x) => x.state === "SENT"));
    } finally {
      if (
        !(await fetch(`${amUrl}/-/ready`).then(
          (r) => r.ok,
          () => false,
        ))
      )
        await restartService(proc).catch(() => {});
    }
  });
});

describe("Alertmanager down (1004)", () => {
  test("an Alertmanager that misses deliveries raises 1004, told to the webhook; back, it resolves", async () => {
    const local = webhookReceiver();
    const watcher = await testRuntime({
      alerts: { ...fast, evaluationInterval: 200, alertmanagers: [amUrl], webhooks: [{ name: "watch", url: local.url, alerts: [1004] }] },
    });
    const proc = am.services[0]!;
    try {
      await killService(proc);
      const raised = await watcher.request("/api/alerts", {
        method: "POST",
        role: "write",
        body: goAlert(`am-down-${crypto.randomUUID().slice(0, 8)}/t`),
      });
      expect(raised.status).toBe(200);
      await waitFor(() => local.accepted.some((a) => a.instance === amUrl && a.status === "firing"), {
        timeoutMs: 20_000,
        what: "1004 at the webhook",
      });
      const active = (await (await watcher.request("/api/alerts?alertId=1004&state=active", { role: "read" })).json()) as Notification[];
      expect(active.map((n) => [n.labels.alertname, n.labels.instance])).toEqual([["AlertmanagerDown", amUrl]]);
      await restartService(proc);
      await waitFor(() => local.accepted.some((a) => a.instance === amUrl && a.status === "resolved"), {
        timeoutMs: 30_000,
        what: "1004 resolved at the webhook",
      });
    } finally {
      if (
        !(await fetch(`${amUrl}/-/ready`).then(
          (r) => r.ok,
          () => false,
        ))
      )
        await restartService(proc).catch(() => {});
      await watcher.dispose();
      local.stop();
    }
  }, 90_000);
});

describe("webhook", () => {
  test("a webhook that refuses gets the alert once when it accepts again, signed; then its resolution once", async () => {
    hook.state.down = true;
    const refusedBefore = hook.state.refused;
    const instance = `hook-${crypto.randomUUID().slice(0, 8)}/t`;
    const n = (await (await rt.request("/api/alerts", { method: "POST", role: "write", body: goAlert(instance) })).json()) as Notification;
    await waitFor(() => hook.state.refused >= refusedBefore + 3, { timeoutMs: 15_000, what: "three refused attempts" });
    hook.state.down = false;
    await waitFor(() => hook.accepted.some((a) => a.instance === instance), { timeoutMs: 15_000, what: "the delivery accepted" });
    await rt.request("/api/alerts", { method: "POST", role: "write", body: goAlert(instance, new Date().toISOString()) });
    await waitFor(() => hook.accepted.some((a) => a.instance === instance && a.status === "resolved"), { timeoutMs: 15_000 });
    // A later alert delivered after both shows the outbox went on past them: nothing was sent twice.
    const later = `hook-later-${crypto.randomUUID().slice(0, 8)}/t`;
    await rt.request("/api/alerts", { method: "POST", role: "write", body: goAlert(later) });
    await waitFor(() => hook.accepted.some((a) => a.instance === later), { timeoutMs: 15_000 });
    const mine = hook.accepted.filter((a) => a.instance === instance);
    expect(mine.map((a) => [a.status, a.delivery])).toEqual([
      ["firing", `${n.id}:firing`],
      ["resolved", `${n.id}:resolved`],
    ]);
    expect(mine.every((a) => a.signed)).toBe(true);
  });
});

describe("a restart", () => {
  test("Loupe killed with SIGKILL while a delivery is pending sends it after its restart, once", async () => {
    const local = webhookReceiver();
    local.state.down = true;
    const config = { alerts: { ...fast, alertmanagers: [amUrl], webhooks: [{ name: "crash", url: local.url, secret: SECRET }] } };
    let server = await startServerProcess(config);
    try {
      const instance = `crash-${crypto.randomUUID().slice(0, 8)}/t`;
      const raised = await server.request("/api/alerts", {
        method: "POST",
        role: "write",
        body: goAlert(instance),
        headers: { "content-type": "application/json" },
      });
      expect(raised.status).toBe(200);
      const n = (await raised.json()) as Notification;
      const request = (s: typeof server) => (p: string) => s.request(p, { role: "read" });
      await waitFor(
        async () => ((await deliveriesOf(request(server), n.id)).find((d) => d.channel === "webhook:crash")?.attempts ?? 0) >= 1,
        {
          timeoutMs: 15_000,
        },
      );
      await server.kill();
      local.state.down = false;
      server = await startServerProcess(config, { dir: server.dir });
      await waitFor(() => local.accepted.some((a) => a.instance === instance), {
        timeoutMs: 20_000,
        what: "the pending delivery after the restart",
      });
      const later = `crash-later-${crypto.randomUUID().slice(0, 8)}/t`;
      await server.request("/api/alerts", {
        method: "POST",
        role: "write",
        body: goAlert(later),
        headers: { "content-type": "application/json" },
      });
      await waitFor(() => local.accepted.some((a) => a.instance === later), { timeoutMs: 15_000 });
      expect(local.accepted.filter((a) => a.instance === instance).map((a) => a.delivery)).toEqual([`${n.id}:firing`]);
      expect((await amAlerts(amUrl, instance)).length).toBe(1);
      await waitFor(async () => (await deliveriesOf(request(server), n.id)).every((d) => d.state === "SENT"));
    } finally {
      await server.stop();
      local.stop();
    }
  }, 90_000);
});
