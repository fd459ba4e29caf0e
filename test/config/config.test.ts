import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError, ENV_OVERRIDES, loadConfig, parseConfig } from "../../src/config/load.ts";
import { credentialWarnings, deprecations } from "../../src/config/schema.ts";

const dir = mkdtempSync(join(tmpdir(), "loupe-cfg-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, text: string) => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};
const root = join(import.meta.dir, "../..");

describe("configuration", () => {
  test("defaults without a file", () => {
    const cfg = loadConfig({ env: {} });
    expect(cfg.server).toEqual({ host: "127.0.0.1", port: 9991, bodyLimit: 1_048_576, allowedHosts: [], checkForwardedHost: false });
    expect(cfg.auth.tokenLifetime).toBe(8 * 3_600_000);
    expect(cfg.kafka.clusters[0]!.bootstrapServers).toEqual(["127.0.0.1:9092"]);
  });

  test("reads TOML, then LOUPE_* variables win", () => {
    const p = file(
      "ok.toml",
      `dataDir = "/var/lib/loupe"
[server]
port = 8080
[auth]
tokenLifetime = "2h"
idleTimeout = "10m"
[[kafka.clusters]]
name = "prod"
bootstrapServers = "k1:9092,k2:9092"
default = true
[[kafka.clusters]]
name = "dr"
bootstrapServers = ["d1:9092"]
`,
    );
    const cfg = loadConfig({ path: p, env: { LOUPE_PORT: "9100", LOUPE_KAFKA_BOOTSTRAP: "x:1", LOUPE_DATA_DIR: "/tmp/l" } });
    expect(cfg.server.port).toBe(9100);
    expect(cfg.dataDir).toBe("/tmp/l");
    expect(cfg.auth.tokenLifetime).toBe(7_200_000);
    expect(cfg.auth.idleTimeout).toBe(600_000);
    expect(cfg.kafka.clusters.map((c) => [c.name, c.bootstrapServers])).toEqual([
      ["prod", ["x:1"]],
      ["dr", ["d1:9092"]],
    ]);
  });

  test("22.13: server.allowedHosts from the file (a list or one comma-separated string), then LOUPE_ALLOWED_HOSTS; a scheme or a port is refused", () => {
    const p = file("hosts.toml", `[server]\nallowedHosts = ["Loupe.Example.COM.", ".corp.example", "*"]\ncheckForwardedHost = true\n`);
    expect(loadConfig({ path: p, env: {} }).server).toMatchObject({
      allowedHosts: ["loupe.example.com", ".corp.example", "*"],
      checkForwardedHost: true,
    });
    const fromEnv = loadConfig({ path: p, env: { LOUPE_ALLOWED_HOSTS: "kafka-ui.example.com, loupe" } });
    expect(fromEnv.server.allowedHosts).toEqual(["kafka-ui.example.com", "loupe"]);
    expect(() => loadConfig({ env: { LOUPE_ALLOWED_HOSTS: "https://loupe.example.com" } })).toThrow("server.allowedHosts.0");
    expect(() => loadConfig({ env: { LOUPE_ALLOWED_HOSTS: "loupe.example.com:443" } })).toThrow("without scheme, port or path");
  });

  test("Connect clusters and the registry: file, then LOUPE_CONNECT_URLS and LOUPE_SCHEMA_REGISTRY_URL", () => {
    const p = file(
      "proxies.toml",
      `[[connect.clusters]]
alias = "dev"
urls = ["http://w1:8083", "http://w2:8083/"]
auth = { username = "loupe", password = "pw" }
[connect]
timeout = "5s"
[schemaRegistry]
urls = "http://r1:8081,http://r2:8081"
allowDelete = true
`,
    );
    const fromFile = loadConfig({ path: p, env: {} });
    expect(fromFile.connect.clusters.map((c) => [c.alias, c.urls, c.auth?.username])).toEqual([
      ["dev", ["http://w1:8083", "http://w2:8083"], "loupe"],
    ]);
    expect(fromFile.connect.timeout).toBe(5000);
    expect(fromFile.connect.guardRails.enabled).toBe(true);
    expect(fromFile.connect.guardRails.deniedPlugins).toContain("org.apache.kafka.connect.file.FileStreamSourceConnector");
    expect(fromFile.schemaRegistry).toMatchObject({ urls: ["http://r1:8081", "http://r2:8081"], allowDelete: true, timeout: 10_000 });

    const env = { LOUPE_CONNECT_URLS: "dev=http://x1:1,http://x2:2; ops=http://o:3", LOUPE_SCHEMA_REGISTRY_URL: "http://e:1" };
    const fromEnv = loadConfig({ path: p, env });
    // The file's alias keeps its auth and gets the variable's workers; a new alias is added.
    expect(fromEnv.connect.clusters.map((c) => [c.alias, c.urls, c.auth?.username])).toEqual([
      ["dev", ["http://x1:1", "http://x2:2"], "loupe"],
      ["ops", ["http://o:3"], undefined],
    ]);
    expect(fromEnv.schemaRegistry).toMatchObject({ urls: ["http://e:1"], allowDelete: true });
    expect(() => loadConfig({ env: { LOUPE_CONNECT_URLS: "http://no-alias:1" } })).toThrow("LOUPE_CONNECT_URLS");
    expect(() => loadConfig({ env: { LOUPE_CONNECT_URLS: "a=ftp://x" } })).toThrow("connect.clusters.0.urls.0");
    expect(() =>
      parseConfig({
        connect: {
          clusters: [
            { alias: "a", urls: "http://x" },
            { alias: "a", urls: "http://y" },
          ],
        },
      }),
    ).toThrow("duplicate Connect alias 'a'");
    expect(() => parseConfig({ schemaRegistry: { urls: "http://x", auth: { username: "u" } } })).toThrow(
      "exactly one of password and passwordFile",
    );
  });

  test("22.7: the file may not name two users alike but for case (one name, one identity)", () => {
    const hash = "$argon2id$v=19$m=65536,t=2,p=1$c2FsdA$aGFzaA";
    expect(() =>
      parseConfig({
        users: [
          { name: "carol", passwordHash: hash },
          { name: "Carol", passwordHash: hash },
        ],
      }),
    ).toThrow("user 'Carol' is user 'carol' but for case");
  });

  test("sql.schemaRegistry still works, read as schemaRegistry, with a deprecation line", () => {
    const legacy = parseConfig({ sql: { schemaRegistry: { urls: ["http://old:8081"] } } });
    expect(legacy.schemaRegistry).toMatchObject({ urls: ["http://old:8081"], allowDelete: false });
    expect(deprecations(legacy)).toEqual(["sql.schemaRegistry is deprecated: move it to the top-level schemaRegistry section"]);
    const both = parseConfig({ sql: { schemaRegistry: { urls: ["http://old:8081"] } }, schemaRegistry: { urls: "http://new:8081" } });
    expect(both.schemaRegistry?.urls).toEqual(["http://new:8081"]);
    expect(deprecations(both)[0]).toContain("ignored");
    // The variable replaces the old key without a warning about it.
    const p = file("legacy.toml", `[sql.schemaRegistry]\nurls = ["http://old:8081"]\n`);
    const viaEnv = loadConfig({ path: p, env: { LOUPE_SCHEMA_REGISTRY_URL: "http://env:1" } });
    expect(viaEnv.schemaRegistry?.urls).toEqual(["http://env:1"]);
    expect(deprecations(viaEnv)).toEqual([]);
    expect(deprecations(parseConfig({}))).toEqual([]);
  });

  test("errors name the key and the problem", () => {
    const bad = () => parseConfig({ server: { port: 70000 }, kafka: { clusters: [{ name: "a", bootstrapServers: "nohost" }] }, bogus: 1 });
    expect(bad).toThrow(ConfigError);
    try {
      bad();
    } catch (e) {
      const keys = (e as ConfigError).problems.map((p) => p.key).sort();
      expect(keys).toEqual(["(root)", "kafka.clusters.0.bootstrapServers.0", "server.port"]);
      expect((e as ConfigError).message).toContain("kafka.clusters.0.bootstrapServers.0: expected host:port");
    }
    expect(() => parseConfig({ users: [{ name: "a", passwordHash: "plain", roles: ["admin"] }] })).toThrow(
      "users.0.passwordHash: expected an argon2id hash",
    );
    expect(() => parseConfig({ auth: { idleTimeout: "soon" } })).toThrow("auth.idleTimeout");
  });

  test("28: store.url names a PostgreSQL store, its password in a file; SQLite when absent; a password in the URL is warned of, never shown", () => {
    expect(parseConfig({}).store).toEqual({ poolSize: 10 });
    const pg = parseConfig({ store: { url: "postgres://loupe@db:5432/loupe", passwordFile: "/etc/loupe/pw" } });
    expect(pg.store).toEqual({ url: "postgres://loupe@db:5432/loupe", passwordFile: "/etc/loupe/pw", poolSize: 10 });
    expect(credentialWarnings(pg)).toEqual([]);
    expect(() => parseConfig({ store: { url: "mysql://db/loupe" } })).toThrow("store.url: expected a postgres:// URL");
    expect(() => parseConfig({ store: { passwordFile: "/etc/loupe/pw" } })).toThrow("passwordFile is the PostgreSQL store's: set url too");
    const inUrl = credentialWarnings(parseConfig({ store: { url: "postgresql://loupe:hunter2@db/loupe" } }));
    expect(inUrl).toEqual(["store.url carries a password: move it to store.passwordFile; it is used, and never shown"]);
    expect(inUrl.join()).not.toContain("hunter2");
  });

  test("`loupe check-config` and `serve` refuse a bad file with exit code 2, naming the key", async () => {
    const p = file("bad.toml", `[server]\nport = "eighty"\n`);
    for (const cmd of [["check-config"], ["serve"]]) {
      const proc = Bun.spawn([process.execPath, join(root, "src/main.ts"), ...cmd], {
        env: { ...process.env, LOUPE_CONFIG: p },
        stderr: "pipe",
        stdout: "pipe",
      });
      const code = await proc.exited;
      const err = await new Response(proc.stderr).text();
      expect(code).toBe(2);
      expect(err).toContain("server.port");
    }
    const broken = file("broken.toml", `[server\nport = 1`);
    const proc = Bun.spawn([process.execPath, join(root, "src/main.ts"), "check-config", "--config", broken], { stderr: "pipe" });
    expect(await proc.exited).toBe(2);
    expect(await new Response(proc.stderr).text()).toContain("is not valid TOML");
    const missing = Bun.spawn([process.execPath, join(root, "src/main.ts"), "check-config", "--config", join(dir, "none.toml")], {
      stderr: "pipe",
    });
    expect(await missing.exited).toBe(2);
  });

  test("`loupe hash-password` prints an argon2id hash that verifies", async () => {
    const proc = Bun.spawn([process.execPath, join(root, "src/main.ts"), "hash-password"], { stdin: "pipe", stdout: "pipe" });
    proc.stdin.write("s3cret-pw\n");
    proc.stdin.end();
    expect(await proc.exited).toBe(0);
    const hash = (await new Response(proc.stdout).text()).trim();
    expect(hash).toStartWith("$argon2id$");
    expect(await Bun.password.verify("s3cret-pw", hash)).toBe(true);
  });
});

describe("environment overrides", () => {
  /** A value of each variable, and the key of the loaded configuration it must set. */
  const SAMPLES: Record<string, { value: string; read: (c: ReturnType<typeof loadConfig>) => unknown; expected: unknown }> = {
    LOUPE_HOST: { value: "0.0.0.0", read: (c) => c.server.host, expected: "0.0.0.0" },
    LOUPE_PORT: { value: "9999", read: (c) => c.server.port, expected: 9999 },
    LOUPE_ALLOWED_HOSTS: { value: "a.example, b.example", read: (c) => c.server.allowedHosts, expected: ["a.example", "b.example"] },
    LOUPE_DATA_DIR: { value: "/srv/loupe", read: (c) => c.dataDir, expected: "/srv/loupe" },
    LOUPE_STORE_URL: { value: "postgres://loupe@db:5432/loupe", read: (c) => c.store.url, expected: "postgres://loupe@db:5432/loupe" },
    LOUPE_LOG_LEVEL: { value: "DEBUG", read: (c) => c.log.level, expected: "debug" },
    LOUPE_TOKEN_LIFETIME: { value: "2h", read: (c) => c.auth.tokenLifetime, expected: 7_200_000 },
    LOUPE_IDLE_TIMEOUT: { value: "10m", read: (c) => c.auth.idleTimeout, expected: 600_000 },
    LOUPE_SCHEMA_REGISTRY_URL: {
      value: "http://r1:8081,http://r2:8081",
      read: (c) => c.schemaRegistry?.urls,
      expected: ["http://r1:8081", "http://r2:8081"],
    },
    LOUPE_SCHEMA_REGISTRY_TOPICS: {
      value: "_schemas, _schemas2",
      read: (c) => c.schemaRegistry?.topics,
      expected: ["_schemas", "_schemas2"],
    },
    LOUPE_CONNECT_URLS: { value: "main=http://c1:8083", read: (c) => c.connect.clusters[0]?.urls, expected: ["http://c1:8083"] },
    LOUPE_CONNECT_TOPICS: {
      value: "main=cfg,off,st",
      read: (c) => c.connect.clusters[0]?.topics,
      expected: { configs: "cfg", offsets: "off", statuses: "st" },
    },
    LOUPE_KAFKA_BOOTSTRAP: { value: "k1:9092", read: (c) => c.kafka.clusters[0]?.bootstrapServers, expected: ["k1:9092"] },
  };
  // What the variables above need beside them: a registry to give topics to, a Connect alias.
  const BASE = { LOUPE_SCHEMA_REGISTRY_URL: "http://r:8081", LOUPE_CONNECT_URLS: "main=http://c:8083" };

  test("24: ENV_OVERRIDES is the one list of variables: the loader applies exactly its entries, and each sets the key it names", async () => {
    expect(Object.keys(ENV_OVERRIDES).sort()).toEqual(Object.keys(SAMPLES).sort());
    for (const [name, sample] of Object.entries(SAMPLES)) {
      const override = ENV_OVERRIDES[name]!;
      expect(typeof override.apply).toBe("function");
      const cfg = loadConfig({ env: { ...BASE, [name]: sample.value } });
      expect({ name, key: override.key, value: sample.read(cfg) }).toEqual({ name, key: override.key, value: sample.expected });
    }
    // The loader reads no LOUPE_* variable by hand beside the table (LOUPE_CONFIG names the file).
    const source = await Bun.file(join(root, "src/config/load.ts")).text();
    expect([...source.matchAll(/env\.(LOUPE_[A-Z_]+)/g)].map((m) => m[1])).toEqual(["LOUPE_CONFIG"]);
  });
});
