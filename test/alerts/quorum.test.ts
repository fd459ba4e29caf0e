/**
 * The controller quorum's alerts on a real quorum of three controllers (each node broker and
 * controller, static voters): the active controller killed, the others elect a new leader, which
 * raises 1007 (the leader changed, from and to which node), and the dead controller, no longer
 * fetching from the new leader, raises 1001 once its silence passes `alerts.controllerSilence`.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { ServiceProcess } from "../cluster/cluster.ts";
import { killService, startControllerQuorum } from "../cluster/cluster.ts";
import { type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { waitFor } from "../helpers/wait.ts";

let quorum: Awaited<ReturnType<typeof startControllerQuorum>> | undefined;
let rt: TestRuntime | undefined;

beforeAll(async () => {
  quorum = await startControllerQuorum(3, { ownerPid: process.pid });
  rt = await testRuntime({
    kafka: { clusters: [{ name: `quorum-${crypto.randomUUID().slice(0, 8)}`, bootstrapServers: quorum.bootstrap, default: true }] },
    alerts: { evaluationInterval: 300, controllerSilence: "2s" },
  });
  // 1001 ships off.
  expect((await rt.request("/api/alerts/settings/1001", { method: "PUT", role: "admin" })).status).toBe(200);
}, 120_000);

afterAll(async () => {
  await rt?.dispose();
  await quorum?.stop();
}, 30_000);

interface Notification {
  alertId: number;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  endsAt: string | null;
}

async function active(alertId: number): Promise<Notification[]> {
  const res = await rt!.request(`/api/alerts?alertId=${alertId}&limit=100`, { role: "read" });
  expect(res.status).toBe(200);
  return ((await res.json()) as Notification[]).filter((n) => n.endsAt === null);
}

describe("the controller quorum", () => {
  test("26: the active controller killed: 1007 says the leader changed from it to the new one, and 1001 that it no longer follows", async () => {
    const kafka = rt!.kafka.default();
    const before = await waitFor(
      async () => {
        const q = await kafka.quorum().catch(() => null);
        return q && q.leaderId > 0 && q.voters.length === 3 ? q : undefined;
      },
      { timeoutMs: 30_000, what: "a quorum of three with a leader" },
    );
    // A pass that sees this leader, so that the next one after the kill sees a change (the
    // scheduled passes may not have run yet when the quorum was ready at once).
    await rt!.alertEvaluator.evaluate().catch(() => {});
    // No alert while all three follow.
    expect(await active(1001)).toEqual([]);
    const leader: ServiceProcess = quorum!.nodes.find((n) => n.nodeId === before.leaderId)!;
    await killService(leader);

    const changed = await waitFor(async () => (await active(1007)).find((n) => n.annotations.summary?.includes("leader changed")), {
      timeoutMs: 30_000,
      what: "1007: the leader changed",
    });
    const after = await kafka.quorum();
    expect(after!.leaderId).not.toBe(before.leaderId);
    expect(changed.annotations.summary).toContain(`from node ${before.leaderId} to node ${after!.leaderId}`);

    const down = await waitFor(async () => (await active(1001)).find((n) => n.labels.instance === `controller ${before.leaderId}`), {
      timeoutMs: 30_000,
      what: "1001: the dead controller",
    });
    expect(down.annotations.summary).toContain(`Controller ${before.leaderId} of the KRaft quorum`);
    // Only the dead one: the survivors follow the new leader.
    expect((await active(1001)).map((n) => n.labels.instance)).toEqual([`controller ${before.leaderId}`]);
  }, 90_000);
});
