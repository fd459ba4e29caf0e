/**
 * `/api/acl` on a broker without an authorizer (a broker of its own: the shared ones have
 * one). CLIENTS.md 2: the Go CLI prints "no authorizer is configured on the broker" for a 400 on
 * the list, and the Python tests expect 200 only where an authorizer exists.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Cluster, startCluster } from "../cluster/cluster.ts";
import { errorOf, type TestRuntime, testRuntime } from "../helpers/runtime.ts";

let cluster: Cluster | undefined;
let rt: TestRuntime | undefined;

beforeAll(async () => {
  cluster = await startCluster({ services: ["kafka"], ownerPid: process.pid, kafkaProperties: { "authorizer.class.name": "" } });
  rt = await testRuntime({ kafka: { clusters: [{ name: "open", bootstrapServers: [cluster.env.KAFKA_BOOTSTRAP!], default: true }] } });
}, 120_000);
afterAll(async () => {
  await rt?.dispose();
  await cluster?.stop();
});

const binding = {
  resourceType: "TOPIC",
  resourceName: "t",
  principal: "User:alice",
  permissionType: "ALLOW",
  host: "*",
  operation: "READ",
};

describe("a broker without an authorizer", () => {
  test("GET /api/acl: 400 with the words the Go CLI prints", async () => {
    const res = await rt!.request("/api/acl", { role: "nodata", headers: { "accept-encoding": "gzip" } });
    expect(res.status).toBe(400);
    const err = await errorOf(res);
    expect(err.message).toContain("no authorizer is configured on the broker");
    expect(err.details).toMatchObject({ kafkaError: "SECURITY_DISABLED" });
  });

  test("PUT and DELETE: 400 with the same words, audited as failures", async () => {
    for (const [method, change] of [
      ["PUT", "ADD"],
      ["DELETE", "REMOVE"],
    ] as const) {
      const res = await rt!.request("/api/acl", { method, role: "admin", body: JSON.stringify(binding) });
      expect(res.status).toBe(400);
      expect((await errorOf(res)).message).toContain("no authorizer is configured on the broker");
      const [entry] = (await (await rt!.request("/api/audit?type=ACL&limit=1", { role: "admin" })).json()) as Array<{
        change: string;
        content: Record<string, string>;
      }>;
      expect(entry).toMatchObject({ change, content: { outcome: "FAILURE", principal: "User:alice" } });
    }
  });

  test("explain: allowed, because nothing is authorized", async () => {
    const res = await rt!.request("/api/acl/explain?principal=User:alice&resourceType=Topic&resourceName=t&operation=Write", {
      role: "nodata",
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ allowed: true, reason: "NO_AUTHORIZER", deciding: [], considered: [] });
  });
});
