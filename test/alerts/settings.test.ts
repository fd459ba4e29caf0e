// @postgres
/**
 * Alert settings and conditions through the API (SPEC: alert setting, identifiers, the settings
 * endpoints; CLIENTS.md 3): the listing by category, enabling with no body, conditions with and
 * without a uuid as plain text, every validation error, the audit of each change, and a
 * disabled setting raising nothing.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { uniqueTopic } from "../cluster/cluster.ts";
import { errorOf, type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { waitFor } from "../helpers/wait.ts";

let rt: TestRuntime;
const topics: string[] = [];

beforeAll(async () => {
  rt = await testRuntime({ alerts: { evaluationInterval: 0 } });
});
afterAll(() => rt.dispose({ topics }));

const SPEC_IDS = [
  1, 1000, 1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014, 2000, 3000, 4000, 4001, 4002,
];
/** Beyond the SPEC: a connector, a connector task, a processor FAILED. */
const OWN_IDS = [3001, 3002, 5000];

interface Setting {
  id: number;
  description: string;
  category: string;
  enabled: boolean;
  isAvailable: boolean;
  docs: string;
  conditions: Record<string, string>;
  conditionTemplate: string | null;
  conditionRegex: string;
}

const text = (body: string) => ({ body, headers: { "content-type": "text/plain" } });

async function auditOf(type: string): Promise<{ change: string; content: Record<string, string> }[]> {
  const res = await rt.request(`/api/audit?type=${type}`, { role: "admin" });
  expect(res.status).toBe(200);
  return (await res.json()) as { change: string; content: Record<string, string> }[];
}

describe("alert settings", () => {
  test("every SPEC identifier and Loupe's own are settings, Infrastructure and Consumers under categories, the other groups under their own keys", async () => {
    const res = await rt.request("/api/alerts/settings", { role: "nodata" });
    expect(res.status).toBe(200);
    const { categories } = (await res.json()) as { categories: Record<string, Setting[]> };
    expect(Object.keys(categories).sort()).toEqual(["Connect", "Consumers", "Infrastructure", "License", "Processors", "Topics"]);
    const all = Object.values(categories).flat();
    expect(all.map((s) => s.id).sort((a, b) => a - b)).toEqual([...SPEC_IDS, ...OWN_IDS].sort((a, b) => a - b));
    for (const [key, list] of Object.entries(categories)) for (const s of list) expect(s.category).toBe(key);
    for (const s of all) {
      expect(s.description.length).toBeGreaterThan(0);
      expect(typeof s.enabled).toBe("boolean");
      expect(typeof s.isAvailable).toBe("boolean");
      expect(s.docs).toContain(`#${s.id}`);
      expect(s.conditions).toEqual({});
      expect(typeof s.conditionRegex).toBe("string");
    }
    const lag = categories.Consumers!.find((s) => s.id === 2000)!;
    expect(lag.conditionTemplate).toBe("lag >= $Threshold-Number on group $Consumer-Group and topic $Topic-Name");
    expect(new RegExp(lag.conditionRegex).test("lag >= 100000 on group group and topic topicA")).toBe(true);
    // Loupe has no licence, and this cluster names no brokers' metrics endpoints.
    expect(all.find((s) => s.id === 1)!.isAvailable).toBe(false);
    expect(all.find((s) => s.id === 1009)!.isAvailable).toBe(false);
    expect(all.filter((s) => s.enabled).map((s) => s.id)).toEqual([
      1000, 1002, 1003, 1004, 1005, 1006, 1007, 2000, 3000, 3001, 3002, 4000, 4001, 4002, 5000,
    ]);
  });

  test("one setting; an unknown id is 404, an id that is no positive integer 400", async () => {
    const one = await rt.request("/api/alerts/settings/1005", { role: "read" });
    expect(one.status).toBe(200);
    expect(((await one.json()) as Setting).description).toBe("Under replicated partitions");
    const unknown = await rt.request("/api/alerts/settings/999", { role: "read" });
    expect(unknown.status).toBe(404);
    expect((await errorOf(unknown)).message).toContain("Alert setting 999 does not exist");
    for (const bad of ["abc", "0", "-1", "1.5"])
      expect((await rt.request(`/api/alerts/settings/${bad}`, { role: "read" })).status).toBe(400);
  });

  test("PUT with no body and no content type enables (the Go CLI); `false` and `true` set the state; each change audited", async () => {
    const off = await rt.request("/api/alerts/settings/1005", { method: "PUT", role: "admin", body: "false" });
    expect(off.status).toBe(200);
    expect(((await off.json()) as Setting).enabled).toBe(false);
    expect(((await (await rt.request("/api/alerts/settings/1005", { role: "read" })).json()) as Setting).enabled).toBe(false);
    const on = await rt.request("/api/alerts/settings/1005", { method: "PUT", role: "admin" });
    expect(on.status).toBe(200);
    expect(((await on.json()) as Setting).enabled).toBe(true);
    expect((await rt.request("/api/alerts/settings/1005", { method: "PUT", role: "admin", body: "maybe" })).status).toBe(400);
    expect((await rt.request("/api/alerts/settings/4242", { method: "PUT", role: "admin" })).status).toBe(404);
    const entries = (await auditOf("ALERT_SETTING")).filter((e) => e.content.alertId === "1005");
    expect(entries.map((e) => [e.change, e.content.enabled, e.content.outcome])).toContainEqual(["UPDATE", "false", "SUCCESS"]);
    expect(entries.map((e) => [e.change, e.content.enabled, e.content.outcome])).toContainEqual(["UPDATE", "true", "SUCCESS"]);
    // Stored: the row in the store holds the state.
    const row = await rt.store.db.selectFrom("alert_settings").select("enabled").where("alert_id", "=", 1005).executeTakeFirstOrThrow();
    expect(row.enabled).toBe(1);
  });
});

describe("conditions", () => {
  test("POST without a uuid (the Go CLI, text/plain) assigns one; with a uuid creates then replaces; DELETE removes; audited", async () => {
    const added = await rt.request("/api/alerts/settings/2000/condition", {
      method: "POST",
      role: "write",
      ...text("lag >= 100000 on group group and topic topicA"),
    });
    expect(added.status).toBe(200);
    const { id } = (await added.json()) as { id: string };
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    const uuid = crypto.randomUUID();
    const put = await rt.request(`/api/alerts/settings/2000/condition/${uuid}`, {
      method: "POST",
      role: "write",
      ...text("lag-seconds >= 300 on group payments-* and topic orders.? for 5m"),
    });
    expect(put.status).toBe(200);
    const replaced = await rt.request(`/api/alerts/settings/2000/condition/${uuid}`, {
      method: "POST",
      role: "write",
      ...text("lag >= 10 on group payments-* and topic *"),
    });
    expect(replaced.status).toBe(200);
    const map = (await (await rt.request("/api/alerts/settings/2000/condition", { role: "nodata" })).json()) as Record<string, string>;
    expect(map).toEqual({ [id]: "lag >= 100000 on group group and topic topicA", [uuid]: "lag >= 10 on group payments-* and topic *" });
    const setting = (await (await rt.request("/api/alerts/settings/2000", { role: "read" })).json()) as Setting;
    expect(setting.conditions).toEqual(map);
    const removed = await rt.request(`/api/alerts/settings/2000/condition/${uuid}`, { method: "DELETE", role: "write" });
    expect(removed.status).toBe(200);
    expect((await rt.request(`/api/alerts/settings/2000/condition/${uuid}`, { method: "DELETE", role: "write" })).status).toBe(404);
    expect((await rt.request(`/api/alerts/settings/2000/condition/${id}`, { method: "DELETE", role: "write" })).status).toBe(200);
    const changes = (await auditOf("ALERT_SETTING")).filter((e) => e.content.conditionId === uuid).map((e) => e.change);
    // Created, replaced, removed (the refused second removal names no condition it acted on).
    expect(changes.sort()).toEqual(["REMOVE", "UPDATE", "UPDATE"]);
  });

  test("a condition that does not match the template is 400 naming the template; a setting without one 400; unknown 404; bad uuid 400", async () => {
    for (const bad of [
      "lag > 5 on group g and topic t",
      "lag >= 0 on group g and topic t",
      "lag >= 5 on group g",
      "",
      "lag >= 5 on group g and topic t for 5d",
    ]) {
      const res = await rt.request("/api/alerts/settings/2000/condition", { method: "POST", role: "write", ...text(bad) });
      expect(res.status).toBe(400);
      expect((await errorOf(res)).message).toContain("lag >= $Threshold-Number on group $Consumer-Group and topic $Topic-Name");
    }
    // The Go CLI's example attaches a lag condition to 1001, which takes none.
    const noTemplate = await rt.request("/api/alerts/settings/1001/condition", {
      method: "POST",
      role: "write",
      ...text("lag >= 100000 on group group and topic topicA"),
    });
    expect(noTemplate.status).toBe(400);
    expect((await errorOf(noTemplate)).message).toContain("takes no conditions");
    expect((await rt.request("/api/alerts/settings/77/condition", { method: "POST", role: "write", ...text("x") })).status).toBe(404);
    expect(
      (await rt.request("/api/alerts/settings/2000/condition/not-a-uuid", { method: "POST", role: "write", ...text("x") })).status,
    ).toBe(400);
    const long = `lag >= 5 on group ${"g".repeat(2_000)} and topic t`;
    expect((await rt.request("/api/alerts/settings/2000/condition", { method: "POST", role: "write", ...text(long) })).status).toBe(400);
  });
});

describe("a disabled setting", () => {
  test("raises nothing: topic creation with 4000 off leaves no notification, with it on one", async () => {
    expect((await rt.request("/api/alerts/settings/4000", { method: "PUT", role: "admin", body: "false" })).status).toBe(200);
    const quiet = uniqueTopic("alerts-off");
    topics.push(quiet);
    expect(
      (await rt.request("/api/topics", { method: "POST", role: "write", body: JSON.stringify({ topicName: quiet, partitions: 1 }) }))
        .status,
    ).toBe(201);
    expect((await rt.request("/api/alerts/settings/4000", { method: "PUT", role: "admin" })).status).toBe(200);
    const loud = uniqueTopic("alerts-on");
    topics.push(loud);
    expect(
      (await rt.request("/api/topics", { method: "POST", role: "write", body: JSON.stringify({ topicName: loud, partitions: 1 }) })).status,
    ).toBe(201);
    const list = await waitFor(async () => {
      const all = (await (await rt.request("/api/alerts?alertId=4000", { role: "admin" })).json()) as { labels: Record<string, string> }[];
      return all.some((n) => n.labels.instance === loud) ? all : null;
    });
    expect(list.some((n) => n.labels.instance === quiet)).toBe(false);
  });
});
