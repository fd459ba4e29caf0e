/**
 * The alert evaluation against the real broker: a consumer group that really lags raises 2000
 * for a records condition and for a lag-seconds condition with a pattern, a condition with a
 * hold does not raise before its time, Alertmanager gets the raised ones, and all of them
 * resolve once the group catches up.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { requireEnv, uniqueTopic } from "../cluster/cluster.ts";
import { type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { waitFor } from "../helpers/wait.ts";

let rt: TestRuntime;
let amUrl: string;
const topics: string[] = [];
const groups: string[] = [];

beforeAll(async () => {
  amUrl = requireEnv("ALERTMANAGER_URL");
  rt = await testRuntime({
    lag: { cacheTtl: 0, sampleInterval: 200 },
    alerts: { evaluationInterval: 300, resendInterval: 1_000, alertmanagers: [amUrl], initialBackoff: 50, maxBackoff: 500 },
  });
});
afterAll(() => rt.dispose({ topics, groups }));

interface Notification {
  id: string;
  alertId: number;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  endsAt: string | null;
}

async function lagAlerts(instance: string): Promise<Notification[]> {
  const res = await rt.request("/api/alerts?alertId=2000&limit=10000", { role: "read" });
  expect(res.status).toBe(200);
  return ((await res.json()) as Notification[]).filter((n) => n.labels.instance === instance);
}

async function addCondition(text: string): Promise<string> {
  const res = await rt.request("/api/alerts/settings/2000/condition", {
    method: "POST",
    role: "write",
    body: text,
    headers: { "content-type": "text/plain" },
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { id: string }).id;
}

describe("consumer lag (2000)", () => {
  test("a lagging group raises its records and lag-seconds conditions, not the one still in its hold; all resolve when it catches up", async () => {
    const topic = uniqueTopic("alert-lag");
    topics.push(topic);
    const prefix = `alert-lag-group-${crypto.randomUUID().slice(0, 8)}`;
    const group = `${prefix}-a`;
    groups.push(group);
    expect(
      (await rt.request("/api/topics", { method: "POST", role: "write", body: JSON.stringify({ topicName: topic, partitions: 1 }) }))
        .status,
    ).toBe(201);
    const kafka = rt.kafka.default();
    // The group has read nothing; then ten records arrive: ten behind, and older by the second.
    await kafka.groups.alterOffsets(group, [{ topic, partition: 0, offset: 0 }]);
    await kafka.writes.produce(
      topic,
      Array.from({ length: 10 }, (_, i) => ({ key: `k${i}`, value: `v${i}` })),
    );
    const records = await addCondition(`lag >= 5 on group ${group} and topic ${topic}`);
    const seconds = await addCondition(`lag-seconds >= 1 on group ${prefix}-* and topic ${topic}`);
    const held = await addCondition(`lag >= 1 on group ${group} and topic ${topic} for 1h`);
    const instance = `${group}/${topic}`;
    const raised = await waitFor(
      async () => {
        const active = (await lagAlerts(instance)).filter((n) => n.endsAt === null);
        return active.length >= 2 ? active : null;
      },
      { timeoutMs: 30_000, what: "both lag conditions raised" },
    );
    expect(raised.map((n) => n.labels.condition).sort()).toEqual([records, seconds].sort());
    const byRecords = raised.find((n) => n.labels.condition === records)!;
    expect(byRecords.labels).toMatchObject({ alertname: "ConsumerLag", category: "Consumers", group, topic, cluster: "local" });
    expect(byRecords.annotations.summary).toContain("10 records behind");
    expect((await lagAlerts(instance)).some((n) => n.labels.condition === held)).toBe(false);
    // Raised once each while they hold: the passes until Alertmanager has them raise nothing new.
    await waitFor(
      async () => {
        const inAm = (await (await fetch(`${amUrl}/api/v2/alerts?filter=${encodeURIComponent(`instance="${instance}"`)}`)).json()) as {
          labels: Record<string, string>;
        }[];
        return inAm.length === 2 && inAm.every((a) => a.labels.alertname === "ConsumerLag");
      },
      { timeoutMs: 15_000, what: "both in Alertmanager" },
    );
    expect((await lagAlerts(instance)).length).toBe(2);
    // Re-sent to Alertmanager on its interval while it holds (Alertmanager would expire it otherwise).
    const sentAt = async () => {
      const rows = (await (await rt.request("/api/alerts/deliveries?limit=10000", { role: "read" })).json()) as {
        notification: string;
        sentAt: number | null;
      }[];
      return rows.find((d) => d.notification === byRecords.id)?.sentAt ?? 0;
    };
    const first = await waitFor(sentAt, { what: "the first delivery" });
    await waitFor(async () => (await sentAt()) >= first + 1_000, { timeoutMs: 10_000, what: "a re-send a second later" });
    expect((await lagAlerts(instance)).length).toBe(2);

    // Caught up: both resolve.
    await kafka.groups.alterOffsets(group, [{ topic, partition: 0, offset: 10 }]);
    const resolved = await waitFor(
      async () => {
        const all = await lagAlerts(instance);
        return all.length === 2 && all.every((n) => n.endsAt !== null) ? all : null;
      },
      { timeoutMs: 30_000, what: "both resolved" },
    );
    expect(resolved.map((n) => n.labels.condition).sort()).toEqual([records, seconds].sort());
    await waitFor(
      async () => {
        const inAm = (await (
          await fetch(`${amUrl}/api/v2/alerts?active=true&filter=${encodeURIComponent(`instance="${instance}"`)}`)
        ).json()) as {
          endsAt: string;
        }[];
        return inAm.every((a) => Date.parse(a.endsAt) <= Date.now());
      },
      { timeoutMs: 15_000, what: "resolved in Alertmanager" },
    );
    for (const id of [records, seconds, held])
      expect((await rt.request(`/api/alerts/settings/2000/condition/${id}`, { method: "DELETE", role: "write" })).status).toBe(200);
  }, 90_000);
});
