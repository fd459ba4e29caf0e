/**
 * Backend URLs configured with credentials as user info (`http://user:pass@host`), through a
 * whole Loupe against the real Connect workers and registry hosts plus dead ports: the
 * credentials still reach the backend (as basic auth), and nothing any user sees or any log
 * keeps holds them: proxy errors, the clusters' page, `GET /api/config`, alerts 1002 and 1003.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connectEnv, freePort } from "../cluster/cluster.ts";
import { errorOf, type TestRuntime, testRuntime } from "../helpers/runtime.ts";

const SECRET = "SECRET-in-url";
const withCreds = (url: string) => url.replace(/^(https?:\/\/)/, `$1loupe:${SECRET}@`);

let rt: TestRuntime;
let deadConnect: string;
let deadRegistry: string;

beforeAll(async () => {
  deadConnect = `http://127.0.0.1:${await freePort()}`;
  deadRegistry = `http://127.0.0.1:${await freePort()}`;
  rt = await testRuntime({
    connect: {
      clusters: [
        { alias: "creds-dead", urls: [withCreds(deadConnect)] },
        { alias: "creds-up", urls: [withCreds(connectEnv().urls[0]!)] },
      ],
      timeout: "5s",
      grace: "30s",
    },
    schemaRegistry: { urls: [withCreds(deadRegistry)], grace: "30s" },
    alerts: { evaluationInterval: 0 },
  });
});
afterAll(async () => {
  await rt.dispose();
}, 60_000);

describe("credentials in backend URLs", () => {
  test("22.6: a URL's password reaches no answer, alert or log line; a start-up warning says to move it to auth", async () => {
    const seen: string[] = [];
    const read = async (path: string, role: "nodata" | "admin" = "nodata") => {
      const res = await rt.request(path, { role });
      const text = await res.clone().text();
      seen.push(`${path}: ${text}`);
      return res;
    };
    // The Connect proxy and the registry proxy with every host down: 503 naming the hosts.
    const connect = await read("/api/proxy-connect/creds-dead/connectors");
    expect([connect.status, (await errorOf(connect)).message]).toEqual([
      503,
      expect.stringContaining(`${deadConnect}: connection refused`),
    ]);
    const again = await read("/api/proxy-connect/creds-dead/connectors");
    expect(again.status).toBe(503);
    const registry = await read("/api/proxy-sr/subjects");
    expect([registry.status, (await errorOf(registry)).message]).toEqual([503, expect.stringContaining(deadRegistry)]);
    await read("/api/proxy-sr/subjects");
    // A live worker configured with credentials still answers (they went as basic auth, which it ignores).
    expect((await read("/api/proxy-connect/creds-up/connectors")).status).toBe(200);
    // The clusters' page and the client config.
    const clusters = (await (await read("/api/connect/clusters")).json()) as { alias: string; workers: { url: string }[] }[];
    expect(clusters.find((c) => c.alias === "creds-dead")!.workers[0]!.url).toBe(deadConnect);
    await read("/api/config");
    // Alerts 1002 (the worker) and 1003 (the registry host), raised by an evaluation pass, as
    // stored and as the API answers them.
    await rt.alertEvaluator.evaluate().catch(() => {});
    const alerts = [
      ...(await rt.notifications.list({ limit: 50, alertId: 1002 })),
      ...(await rt.notifications.list({ limit: 50, alertId: 1003 })),
    ];
    expect(alerts.map((a) => a.labels.instance).sort()).toEqual([`creds-dead ${deadConnect}`, deadRegistry]);
    seen.push(JSON.stringify(alerts));
    await read("/api/alerts?limit=50", "admin");
    await read("/api/logs/INFO", "admin");
    const stored = await rt.store.db.selectFrom("alert_notifications").selectAll().execute();
    seen.push(JSON.stringify(stored));
    // The start-up warning names each key and the URL without the credentials.
    const logs = rt.sink.text();
    expect(logs).toContain(`connect.clusters[creds-dead].urls[0] (${deadConnect}) carries credentials in the URL`);
    expect(logs).toContain(`schemaRegistry.urls[0] (${deadRegistry}) carries credentials in the URL`);
    seen.push(logs);
    for (const text of seen) expect(text).not.toContain(SECRET);
  }, 60_000);
});
