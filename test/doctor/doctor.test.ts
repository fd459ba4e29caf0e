/**
 * `loupe doctor` as an operator runs it: the command line on a configuration file, against the
 * real test services (the open broker, the secured one, both Connect workers, both registry
 * hosts, the directory), and against dead ones made of closed ports. It passes on what works and
 * fails, exit status 1, with the line that says what to fix on what does not.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { chownSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStore } from "../../src/db/index.ts";
import { secureKafkaEnv } from "../cluster/cluster.ts";

const root = join(import.meta.dir, "../..");
const dir = mkdtempSync(join(tmpdir(), "loupe-doctor-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A port nothing listens on: bound, then let go. */
function closedPort(): number {
  const s = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const p = s.port;
  s.stop(true);
  return p;
}

let files = 0;
async function doctor(toml: string, dataDir = join(dir, "data")): Promise<{ code: number; lines: string[] }> {
  const path = join(dir, `loupe-${++files}.toml`);
  writeFileSync(path, `dataDir = ${JSON.stringify(dataDir)}\n${toml}`);
  const p = Bun.spawn([process.execPath, join(root, "src/main.ts"), "doctor", "--config", path], {
    env: { PATH: process.env.PATH ?? "" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [code, out] = await Promise.all([p.exited, new Response(p.stdout).text()]);
  return { code, lines: out.trim().split("\n") };
}

const list = (v: string | undefined) => JSON.stringify((v ?? "").split(",").filter(Boolean));
const devCluster = () => `[[kafka.clusters]]\nname = "dev"\nbootstrapServers = ${JSON.stringify(process.env.KAFKA_BOOTSTRAP)}\n`;
function secured(over: { password?: string; ca?: string } = {}): string {
  const env = secureKafkaEnv();
  return `[[kafka.clusters]]
name = "secured"
bootstrapServers = ${JSON.stringify(env.saslBootstrap)}
[kafka.clusters.sasl]
mechanism = "SCRAM-SHA-512"
username = ${JSON.stringify(env.admin.user)}
password = ${JSON.stringify(over.password ?? env.admin.password)}
[kafka.clusters.tls]
ca = ${JSON.stringify(over.ca ?? env.caFile)}
`;
}

describe("loupe doctor", () => {
  test("passes on the dev services: both brokers, both Connect workers, both registry hosts, the directory", async () => {
    const { code, lines } = await doctor(`${devCluster()}${secured()}
[schemaRegistry]
urls = ${list(process.env.SCHEMA_REGISTRY_URL)}
[[connect.clusters]]
alias = "dev"
urls = ${list(process.env.CONNECT_URL)}
[ldap]
url = ${JSON.stringify(process.env.LDAP_URL)}
bindDn = ${JSON.stringify(process.env.LDAP_BIND_DN)}
bindPassword = ${JSON.stringify(process.env.LDAP_BIND_PASSWORD)}
userBase = ${JSON.stringify(process.env.LDAP_BASE_DN)}
`);
    expect(lines.filter((l) => l.startsWith("FAIL"))).toEqual([]);
    expect(code).toBe(0);
    expect(lines[0]).toMatch(/^ok {3}config: /);
    expect(lines).toContainEqual(expect.stringMatching(/^(ok|warn) store: /));
    expect(lines).toContainEqual(expect.stringMatching(/^ok {3}kafka 'dev': bootstrap .*\(plain text\): 1 broker/));
    expect(lines).toContainEqual(expect.stringMatching(/^ok {3}kafka 'secured': bootstrap .*\(TLS, SASL SCRAM-SHA-512 as loupe-admin\)/));
    // The secured broker runs StandardAuthorizer; Loupe's admin is a super user without ACLs of its own.
    expect(lines).toContainEqual(expect.stringMatching(/^ok {3}kafka 'secured' authorizer: on; User:loupe-admin has \d+ ACL/));
    expect(lines.filter((l) => /^ok {3}connect 'dev' http/.test(l))).toHaveLength(2);
    expect(lines.filter((l) => /^ok {3}registry http/.test(l))).toHaveLength(2);
    expect(lines).toContainEqual(expect.stringMatching(/^ok {3}ldap ldap:\/\/.*: bound as /));
  });

  test("a wrong bootstrap fails with the address and the key to fix", async () => {
    const port = closedPort();
    const { code, lines } = await doctor(`[[kafka.clusters]]\nname = "gone"\nbootstrapServers = "127.0.0.1:${port}"\n`);
    expect(code).toBe(1);
    const line = lines.find((l) => l.startsWith("FAIL kafka 'gone'"));
    console.log(`[doctor] ${line}`);
    expect(line).toContain(`bootstrap 127.0.0.1:${port}`);
    expect(line).toContain(`Fix: check kafka.clusters[gone].bootstrapServers (127.0.0.1:${port})`);
  });

  test("a wrong SASL password fails naming the SASL settings", async () => {
    const { code, lines } = await doctor(secured({ password: "not-the-password" }));
    expect(code).toBe(1);
    const line = lines.find((l) => l.startsWith("FAIL kafka 'secured'"));
    console.log(`[doctor] ${line}`);
    expect(line).toContain("SASL SCRAM-SHA-512 as loupe-admin");
    expect(line).toContain("Fix: check kafka.clusters[secured].sasl");
  });

  test("a CA that did not sign the brokers' certificate fails naming tls.ca", async () => {
    const { code, lines } = await doctor(secured({ ca: secureKafkaEnv().untrusted.caFile }));
    expect(code).toBe(1);
    const line = lines.find((l) => l.startsWith("FAIL kafka 'secured'"));
    console.log(`[doctor] ${line}`);
    expect(line).toContain("Fix: set kafka.clusters[secured].tls.ca");
  });

  test("a dead Connect worker and a dead registry host fail, each on its own line, beside the live ones", async () => {
    const connectPort = closedPort();
    const registryPort = closedPort();
    const liveWorker = (process.env.CONNECT_URL ?? "").split(",")[0]!;
    const liveRegistry = (process.env.SCHEMA_REGISTRY_URL ?? "").split(",")[0]!;
    const { code, lines } = await doctor(`${devCluster()}
[schemaRegistry]
urls = ["${liveRegistry}", "http://127.0.0.1:${registryPort}/apis/ccompat/v7"]
[[connect.clusters]]
alias = "main"
urls = ["${liveWorker}", "http://127.0.0.1:${connectPort}"]
`);
    expect(code).toBe(1);
    expect(lines).toContainEqual(expect.stringMatching(/^ok {3}connect 'main' http/));
    const worker = lines.find((l) => l.startsWith(`FAIL connect 'main' http://127.0.0.1:${connectPort}`));
    expect(worker).toContain("Fix: start the worker or correct connect.clusters[main].urls");
    expect(lines).toContainEqual(expect.stringMatching(/^ok {3}registry http/));
    const registry = lines.find((l) => l.startsWith(`FAIL registry http://127.0.0.1:${registryPort}`));
    expect(registry).toContain("Fix: start the registry host or correct schemaRegistry.urls");
  });

  test("an invalid configuration fails before any check, as check-config does", async () => {
    const { code } = await doctor(`[[kafka.clusters]]\nname = "x"\nbootstrapServers = "no-port"\n`);
    expect(code).toBe(2);
  });

  test("reads the service's store as root, as the installer runs it, and leaves every file there the service user's", async () => {
    const data = join(dir, "store");
    mkdirSync(data);
    const store = await openStore(data);
    await store.close();
    // The service's user (nobody here); the doctor runs as root, as the installer runs it.
    const owner = 65534;
    chownSync(data, owner, owner);
    for (const f of readdirSync(data)) chownSync(join(data, f), owner, owner);
    const { lines } = await doctor(devCluster(), data);
    expect(lines).toContainEqual(expect.stringMatching(/^ok {3}store: .*loupe\.db: schema version \d+, integrity ok$/));
    for (const f of readdirSync(data)) expect(`${f} ${statSync(join(data, f)).uid}`).toBe(`${f} ${owner}`);
  });
});
