/**
 * Benchmark of access checks: what scopes cost on the paths every request and every list take.
 *
 *   bun bench/access.ts [--topics=1000] [--names=10000] [--requests=2000]
 *
 * 1. Scope matching, pure: `filterTopics` over `--names` topic names for an identity of three
 *    groups holding 256 patterns (exact names, prefixes and general globs), against a reference
 *    that compiles each glob to a RegExp and tests every pattern on every name.
 * 2. Authentication and the route check, in process: requests per second of `GET /api/auth` for
 *    a config user with roles, a store user in two scoped groups and a service account, against
 *    `GET /` (the UI's page: public, no token, no check, no Kafka) as the reference. Rounds are
 *    interleaved and the best of three kept, so warm-up and collection fall on no one kind.
 * 3. The topic list over `--topics` topics on a real broker: `GET /api/topics` as an unrestricted
 *    admin (the reference) and as a user scoped to half of them.
 *
 * Uses KAFKA_BOOTSTRAP when set, else starts a broker (test/cluster) and stops it at the end.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildRuntime } from "../src/compose.ts";
import { parseConfig } from "../src/config/load.ts";
import { compileScope, type Group } from "../src/domains/access/scope.ts";
import { scriptBroker, uniqueTopic } from "../test/cluster/cluster.ts";

function arg(name: string, def: number): number {
  const hit = process.argv.find((a) => a.startsWith(`--${name}=`));
  return hit ? Number(hit.split("=")[1]) : def;
}
const TOPICS = arg("topics", 1000);
const NAMES = arg("names", 10_000);
const REQUESTS = arg("requests", 2000);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const fmt = (x: number, unit: string) => `${x >= 100 ? x.toFixed(0) : x.toFixed(2)} ${unit}`;

// 1. Pure matching.
{
  const groups: Group[] = [0, 1, 2].map((g) => ({
    name: `g${g}`,
    roles: ["read"],
    clusters: ["*"],
    topics: {
      allow: [
        ...Array.from({ length: 40 }, (_, i) => `team${g}.exact-${i}`),
        ...Array.from({ length: 30 }, (_, i) => `team${g}.svc${i}.*`),
        ...Array.from({ length: 15 }, (_, i) => `*.team${g}-${i}.events`),
      ],
      deny: [`team${g}.svc0.secret*`],
    },
  }));
  const names = Array.from({ length: NAMES }, (_, i) => {
    const g = i % 4;
    return i % 3 === 0 ? `team${g}.svc${i % 50}.orders-${i}` : i % 3 === 1 ? `x${i}.team${g}-${i % 20}.events` : `team${g}.exact-${i % 60}`;
  });
  const toRegex = (p: string) =>
    new RegExp(
      `^${p
        .replace(/[.+^${}()|[\]\\]/g, "\\$&")
        .replace(/\*/g, ".*")
        .replace(/\?/g, ".")}$`,
    );
  const reference = (ns: string[]) => {
    const compiled = groups.map((g) => ({ allow: g.topics.allow.map(toRegex), deny: (g.topics.deny ?? []).map(toRegex) }));
    return ns.filter((n) => compiled.some((g) => g.allow.some((r) => r.test(n)) && !g.deny.some((r) => r.test(n))));
  };
  const scope = compileScope(groups);
  const ours = (ns: string[]) => scope.filterTopics("any", ns);
  if (ours(names).join() !== reference(names).join()) throw new Error("the scope and the reference disagree");
  const time = (f: (ns: string[]) => string[]) => {
    const runs: number[] = [];
    for (let i = 0; i < 10; i++) f(names);
    for (let i = 0; i < 15; i++) {
      const t = performance.now();
      f(names);
      runs.push(performance.now() - t);
    }
    return median(runs);
  };
  const a = time(ours);
  const b = time(reference);
  const kept = ours(names).length;
  console.log(`1. filterTopics, ${NAMES} names, 3 groups x 86 patterns (${kept} kept):`);
  console.log(
    `   Loupe ${fmt(a, "ms")} (${fmt((a * 1e6) / NAMES, "ns/name")}), RegExp reference ${fmt(b, "ms")}, ratio ${(b / a).toFixed(1)}x faster`,
  );
}

const broker = await scriptBroker(() => {});
const dataDir = mkdtempSync(join(tmpdir(), "loupe-bench-"));
const hash = await Bun.password.hash("bench-admin-pw", "argon2id");
const config = parseConfig({
  dataDir,
  log: { level: "error" },
  lag: { sampleInterval: 0 },
  users: [{ name: "root", passwordHash: hash, roles: ["admin"] }],
  kafka: { clusters: [{ name: "bench", bootstrapServers: broker.bootstrap, default: true }] },
});
const rt = await buildRuntime(config, { sink: { write: () => {} } });
const app = rt.app;
const call = async (path: string, init: RequestInit = {}) => {
  const res = await app.request(path, init);
  if (res.status >= 300) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return res;
};
const login = async (user: string, password: string) =>
  (await call("/api/login", { method: "POST", body: JSON.stringify({ user, password }) })).text();
const asAdmin = { "x-service-token": await login("root", "bench-admin-pw") };
const made: string[] = [];

try {
  // 2. Authentication and the check.
  const prefix = uniqueTopic("bench-acl");
  for (const [name, allow] of [
    ["bench-half", [`${prefix}-a*`]],
    ["bench-other", ["nothing.*"]],
  ] as const)
    await call("/api/groups", {
      method: "POST",
      headers: asAdmin,
      body: JSON.stringify({ name, roles: ["read"], clusters: ["*"], topics: { allow, deny: [] } }),
    });
  await call("/api/users", {
    method: "POST",
    headers: asAdmin,
    body: JSON.stringify({ name: "scoped", password: "bench-scoped-password", groups: ["bench-half", "bench-other"] }),
  });
  const asScoped = { "x-service-token": await login("scoped", "bench-scoped-password") };
  const account = (await (
    await call("/api/service-accounts", {
      method: "POST",
      headers: asAdmin,
      body: JSON.stringify({ name: "bench-sa", groups: ["bench-half"] }),
    })
  ).json()) as { token: string };
  const asService = { "x-service-token": account.token };
  const rate = async (path: string, headers: Record<string, string>) => {
    for (let i = 0; i < 100; i++) await (await call(path, { headers })).arrayBuffer();
    const t = performance.now();
    for (let i = 0; i < REQUESTS; i++) await (await call(path, { headers })).arrayBuffer();
    return REQUESTS / ((performance.now() - t) / 1000);
  };
  const kinds = [
    ["GET /, public (reference)", "/", {}],
    ["GET /api/auth, config user with roles", "/api/auth", asAdmin],
    ["GET /api/auth, store user in 2 scoped groups", "/api/auth", asScoped],
    ["GET /api/auth, service account", "/api/auth", asService],
  ] as const;
  const best = new Map<string, number>();
  for (let round = 0; round < 3; round++)
    for (const [label, path, headers] of kinds) best.set(label, Math.max(best.get(label) ?? 0, await rate(path, headers)));
  const reference = best.get(kinds[0][0])!;
  console.log(`2. requests per second, in process (${REQUESTS} each, best of 3 interleaved rounds):`);
  for (const [label] of kinds)
    console.log(`   ${label}: ${fmt(best.get(label)!, "req/s")} (${((best.get(label)! / reference) * 100).toFixed(0)} % of the reference)`);

  // 3. The topic list.
  const kafka = rt.kafka.default();
  for (let i = 0; i < TOPICS; i++) {
    const name = `${prefix}-${i % 2 === 0 ? "a" : "b"}${i}`;
    made.push(name);
  }
  for (let i = 0; i < made.length; i += 100)
    await Promise.all(made.slice(i, i + 100).map((name) => kafka.topics.create({ name, partitions: 1, replication: 1 })));
  const list = async (headers: Record<string, string>) => {
    const runs: number[] = [];
    let count = 0;
    for (let i = 0; i < 7; i++) {
      const t = performance.now();
      const body = (await (await call("/api/topics", { headers })).json()) as unknown[];
      runs.push(performance.now() - t);
      count = body.length;
    }
    return { ms: median(runs), count };
  };
  const all = await list(asAdmin);
  const half = await list(asScoped);
  console.log(`3. GET /api/topics with ${TOPICS} bench topics on the broker:`);
  console.log(`   admin, every topic (reference): ${fmt(all.ms, "ms")} for ${all.count} topics`);
  console.log(`   scoped to half of them: ${fmt(half.ms, "ms")} for ${half.count} topics (ratio ${(half.ms / all.ms).toFixed(2)})`);
} finally {
  for (let i = 0; i < made.length; i += 100)
    await rt.kafka
      .default()
      .topics.delete(made.slice(i, i + 100))
      .catch(() => undefined);
  await rt.close();
  rmSync(dataDir, { recursive: true, force: true });
  await broker.stop();
}
