// @postgres
/**
 * Two instances of Loupe sharing one store (one SQLite file, or one PostgreSQL database): one of them (the holder of the `alert-delivery`
 * lease) sends the outbox, so a webhook gets each notification once whichever instance raised it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { testStoreSection } from "../helpers/store.ts";
import { waitFor } from "../helpers/wait.ts";

const dataDir = mkdtempSync(join(tmpdir(), "loupe-alert-instances-"));
const received: string[] = [];
const receiver = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(req) {
    const body = (await req.json()) as { notification: { labels: Record<string, string> } };
    received.push(`${req.headers.get("x-loupe-delivery")} ${body.notification.labels.instance}`);
    return new Response("ok");
  },
});
let a: TestRuntime;
let b: TestRuntime;
let store: Awaited<ReturnType<typeof testStoreSection>> | undefined;

beforeAll(async () => {
  const alerts = { evaluationInterval: 0, webhooks: [{ name: "shared", url: `http://127.0.0.1:${receiver.port}/` }] };
  // The store both share: the file in dataDir, or one PostgreSQL database.
  store = await testStoreSection(dataDir);
  a = await testRuntime({ dataDir, ...store.section, processors: { instance: "alerts-a" }, alerts });
  b = await testRuntime({ dataDir, ...store.section, processors: { instance: "alerts-b" }, alerts });
});
afterAll(async () => {
  await b?.dispose();
  await a?.dispose();
  await store?.drop();
  receiver.stop(true);
  rmSync(dataDir, { recursive: true, force: true });
});

describe("two instances on one store", () => {
  test("each notification raised on either instance reaches the webhook once", async () => {
    const tag = crypto.randomUUID().slice(0, 8);
    const instances = Array.from({ length: 10 }, (_, i) => `${tag}-${i}`);
    await Promise.all(
      instances.map((instance, i) =>
        (i % 2 === 0 ? a : b)
          .request("/api/alerts", {
            method: "POST",
            role: "write",
            body: JSON.stringify({
              alertId: 4000,
              labels: { severity: "INFO", category: "Topics", instance },
              annotations: {},
              endsAt: "",
            }),
          })
          .then((res) => expect(res.status).toBe(200)),
      ),
    );
    await waitFor(() => instances.every((i) => received.some((r) => r.endsWith(` ${i}`))), {
      timeoutMs: 20_000,
      what: "all ten delivered",
    });
    // A later one delivered after them: the outbox went past the ten, and sent none of them twice.
    const later = `${tag}-later`;
    await a.request("/api/alerts", {
      method: "POST",
      role: "write",
      body: JSON.stringify({
        alertId: 4000,
        labels: { severity: "INFO", category: "Topics", instance: later },
        annotations: {},
        endsAt: "",
      }),
    });
    await waitFor(() => received.some((r) => r.endsWith(` ${later}`)), { timeoutMs: 20_000 });
    const mine = received.filter((r) => r.includes(` ${tag}-`));
    expect(mine.length).toBe(11);
    expect(new Set(mine).size).toBe(11);
    // One holder of the lease.
    const lease = await a.store.db.selectFrom("leases").select("holder").where("name", "=", "alert-delivery").executeTakeFirstOrThrow();
    expect(["alerts-a", "alerts-b"]).toContain(lease.holder ?? "");
  });
});
