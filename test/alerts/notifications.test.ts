// @postgres
/**
 * GET /api/alerts's filters and paging (one notification by its id, and its deliveries), POST /api/alerts's validation, and the outbox's bounded
 * retries: a channel that never answers is retried with a growing wait, then GAVE_UP, visible in
 * GET /api/alerts/deliveries.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { freePort } from "../cluster/cluster.ts";
import { errorOf, type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { waitFor } from "../helpers/wait.ts";

let rt: TestRuntime;
let deadUrl: string;

beforeAll(async () => {
  // A port nothing listens on: every delivery to it fails at once.
  deadUrl = `http://127.0.0.1:${await freePort()}`;
  rt = await testRuntime({
    alerts: {
      evaluationInterval: 0,
      webhooks: [{ name: "nowhere", url: `${deadUrl}/hook`, alerts: [3000] }],
      initialBackoff: 20,
      maxBackoff: 200,
      giveUpAfter: 1_500,
    },
  });
});
afterAll(() => rt.dispose());

interface Notification {
  id: string;
  alertId: number;
  labels: Record<string, string>;
  startsAt: string;
  endsAt: string | null;
}

const raise = (alertId: number, instance: string, extra: Record<string, unknown> = {}) =>
  rt.request("/api/alerts", {
    method: "POST",
    role: "write",
    body: JSON.stringify({
      alertId,
      labels: { severity: "LOW", category: alertId === 3000 ? "Connect" : "Topics", instance },
      annotations: { summary: instance, source: "test", docs: "" },
      endsAt: "",
      ...extra,
    }),
  });

const list = async (query: string): Promise<Notification[]> => {
  const res = await rt.request(`/api/alerts?${query}`, { role: "read" });
  expect(res.status).toBe(200);
  return (await res.json()) as Notification[];
};

describe("GET /api/alerts", () => {
  test("newest first; filters by id, category, state and time; paged with limit and offset", async () => {
    const tag = crypto.randomUUID().slice(0, 8);
    const t0 = Date.parse("2030-01-01T00:00:00Z");
    // Five notifications a minute apart, in the future so no other notification is among them.
    for (let i = 0; i < 5; i++) {
      const res = await raise(i % 2 === 0 ? 4000 : 4001, `${tag}-${i}`, { startsAt: new Date(t0 + i * 60_000).toISOString() });
      expect(res.status).toBe(200);
    }
    expect((await raise(4000, `${tag}-0`, { endsAt: new Date(t0 + 10 * 60_000).toISOString() })).status).toBe(200);
    const from = `from=${t0}`;
    const all = await list(`${from}&category=Topics`);
    expect(all.map((n) => n.labels.instance)).toEqual([4, 3, 2, 1, 0].map((i) => `${tag}-${i}`));
    expect((await list(`${from}&alertId=4001`)).map((n) => n.labels.instance)).toEqual([`${tag}-3`, `${tag}-1`]);
    expect((await list(`${from}&state=resolved`)).map((n) => n.labels.instance)).toEqual([`${tag}-0`]);
    expect((await list(`${from}&state=active`)).length).toBe(4);
    expect((await list(`${from}&to=${encodeURIComponent(new Date(t0 + 2 * 60_000).toISOString())}`)).map((n) => n.labels.instance)).toEqual(
      [`${tag}-1`, `${tag}-0`],
    );
    expect((await list(`${from}&limit=2&offset=1`)).map((n) => n.labels.instance)).toEqual([`${tag}-3`, `${tag}-2`]);
    expect((await list(`${from}&category=Connect`)).length).toBe(0);
  });

  test("bad filters and bodies are 400 with a message", async () => {
    for (const q of ["state=open", "limit=0", "offset=-1", "from=yesterday", "alertId=x", "unknown=1"])
      expect((await rt.request(`/api/alerts?${q}`, { role: "read" })).status).toBe(400);
    const noSeverity = await rt.request("/api/alerts", {
      method: "POST",
      role: "write",
      body: JSON.stringify({ alertId: 4000, labels: {} }),
    });
    expect((await errorOf(noSeverity)).message).toContain("severity");
    const badTime = await raise(4000, "x", { startsAt: "yesterday" });
    expect(badTime.status).toBe(400);
    expect((await rt.request("/api/alerts", { method: "POST", role: "write", body: "{" })).status).toBe(400);
    // A disabled setting raises nothing: 409.
    expect((await rt.request("/api/alerts/settings/4002", { method: "PUT", role: "admin", body: "false" })).status).toBe(200);
    expect((await raise(4002, "off")).status).toBe(409);
    expect((await rt.request("/api/alerts/settings/4002", { method: "PUT", role: "admin" })).status).toBe(200);
  });
});

describe("one notification, as its page opens it", () => {
  test("GET /api/alerts?id= answers that one; /api/alerts/deliveries?notification= its rows, one per channel", async () => {
    const n = (await (await raise(3000, `one-${crypto.randomUUID().slice(0, 8)}`)).json()) as Notification;
    await raise(3000, `other-${crypto.randomUUID().slice(0, 8)}`);
    expect((await list(`id=${n.id}`)).map((x) => x.id)).toEqual([n.id]);
    expect(await list(`id=${crypto.randomUUID()}`)).toEqual([]);
    const rows = (await (await rt.request(`/api/alerts/deliveries?notification=${n.id}`, { role: "read" })).json()) as {
      notification: string;
      channel: string;
    }[];
    expect(rows.map((r) => [r.notification, r.channel])).toEqual([[n.id, "webhook:nowhere"]]);
    for (const q of ["id=", `id=${"x".repeat(65)}`]) expect((await rt.request(`/api/alerts?${q}`, { role: "read" })).status).toBe(400);
    expect((await rt.request("/api/alerts/deliveries?notification=", { role: "read" })).status).toBe(400);
  });
});

describe("the same alert POSTed at once", () => {
  test("ten POSTs of the same labels at the same moment are one notification, each answered with it", async () => {
    const instance = `same-${crypto.randomUUID().slice(0, 8)}`;
    const answers = await Promise.all(Array.from({ length: 10 }, () => raise(4000, instance)));
    expect(answers.map((r) => r.status)).toEqual(Array(10).fill(200));
    const ids = new Set(await Promise.all(answers.map(async (r) => ((await r.json()) as Notification).id)));
    expect(ids.size).toBe(1);
    expect((await list(`alertId=4000&state=active`)).filter((n) => n.labels.instance === instance).length).toBe(1);
  });
});

describe("a channel that never answers", () => {
  test("is retried with a growing wait, then GAVE_UP with its last error; only the settings it takes are queued for it", async () => {
    const n = (await (await raise(3000, `conn-${crypto.randomUUID().slice(0, 8)}`)).json()) as Notification;
    const other = (await (await raise(4000, `topic-${crypto.randomUUID().slice(0, 8)}`)).json()) as Notification;
    const rows = async () =>
      (
        (await (await rt.request("/api/alerts/deliveries?limit=10000", { role: "read" })).json()) as {
          notification: string;
          channel: string;
          state: string;
          attempts: number;
          lastError: string | null;
          nextAttemptAt: number | null;
        }[]
      ).filter((d) => d.notification === n.id || d.notification === other.id);
    const given = await waitFor(
      async () => {
        const r = (await rows()).find((d) => d.notification === n.id);
        return r?.state === "GAVE_UP" ? r : null;
      },
      { timeoutMs: 15_000, what: "the delivery given up" },
    );
    expect(given.channel).toBe("webhook:nowhere");
    expect(given.lastError).toBeTruthy();
    expect(given.nextAttemptAt).toBeNull();
    // 1.5 s with waits of 20, 40, 80, 160, 200, 200 ms ...: a handful of attempts, not hundreds.
    expect(given.attempts).toBeGreaterThanOrEqual(3);
    expect(given.attempts).toBeLessThan(20);
    // The webhook takes 3000 only: the topic notification has no row for it.
    expect((await rows()).filter((d) => d.notification === other.id)).toEqual([]);
    const gaveUp = (await (await rt.request("/api/alerts/deliveries?state=GAVE_UP", { role: "read" })).json()) as {
      notification: string;
    }[];
    expect(gaveUp.some((d) => d.notification === n.id)).toBe(true);
  });
});
