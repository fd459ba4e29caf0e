/**
 * Guard rails and secrets of the Connect proxy: the rules themselves (table-driven), then each
 * case through Loupe against the real workers (403 for `write`, allowed and audited for
 * `admin`), secrets masked for `read` and `nodata`, and never in the audit table.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { guardRailViolations, pluginKey } from "../../src/domains/connect/guard-rails.ts";
import * as masking from "../../src/domains/connect/masking.ts";
import { MASK, SecretKeys } from "../../src/domains/connect/masking.ts";
import { errorOf, type TestRuntime } from "../helpers/runtime.ts";
import {
  ALIAS,
  auditEntries,
  connectorName,
  connectRuntime,
  createHeartbeat,
  deleteDirect,
  enc,
  heartbeatConfig,
  proxy,
  runningThrough,
  settled,
} from "./helpers.ts";

const DENIED = ["org.apache.kafka.connect.file.FileStreamSourceConnector", "org.apache.kafka.connect.file.FileStreamSinkConnector"];

describe("guard rail rules", () => {
  const cases: [string, Record<string, unknown>, string[]][] = [
    ["an honest config", heartbeatConfig(), []],
    [
      "JNDI login module through a consumer override",
      { "consumer.override.sasl.jaas.config": "com.sun.security.auth.module.JndiLoginModule required;" },
      ["consumer.override.sasl.jaas.config"],
    ],
    ["producer override of the SASL mechanism", { "producer.override.sasl.mechanism": "PLAIN" }, ["producer.override.sasl.mechanism"]],
    [
      "admin override of the truststore, any case",
      { "ADMIN.Override.SSL.truststore.location": "/etc/x" },
      ["ADMIN.Override.SSL.truststore.location"],
    ],
    ["override of security.protocol", { "consumer.override.security.protocol": "PLAINTEXT" }, ["consumer.override.security.protocol"]],
    ["a JAAS config of the connector's own client", { "source.cluster.sasl.jaas.config": "x" }, ["source.cluster.sasl.jaas.config"]],
    ["a login class", { "sasl.login.class": "com.evil.Login" }, ["sasl.login.class"]],
    [
      "a callback handler class",
      { "producer.override.sasl.client.callback.handler.class": "x" },
      ["producer.override.sasl.client.callback.handler.class"],
    ],
    [
      "an OAuth endpoint reading a file",
      { "sasl.oauthbearer.token.endpoint.url": " FILE:/etc/passwd" },
      ["sasl.oauthbearer.token.endpoint.url"],
    ],
    ["an OAuth endpoint over https", { "sasl.oauthbearer.token.endpoint.url": "https://idp/token" }, []],
    ["a file config provider", { topics: "${file:/etc/passwd:x}" }, ["topics"]],
    ["an env config provider", { "tasks.max": "${env:HOME}" }, ["tasks.max"]],
    ["a directory config provider", { x: "a ${directory:/etc:passwd} b" }, ["x"]],
    ["a provider of any name", { x: "${vault:secret/db:password}" }, ["x"]],
    ["a dollar that is no provider", { x: "costs ${price}", y: "$5" }, []],
    [
      "the file source by its full name",
      { "connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector" },
      ["connector.class"],
    ],
    ["the file source by its alias", { "connector.class": "FileStreamSource" }, ["connector.class"]],
    ["the file sink by its simple name, any case", { "Connector.Class": "filestreamsinkconnector" }, ["Connector.Class"]],
    ["numbers and nulls are read as text", { "tasks.max": 5, "x.url": null, y: true }, []],
  ];
  for (const [what, config, keys] of cases)
    test(what, () => expect([...new Set(guardRailViolations(config, DENIED).map((v) => v.key))]).toEqual(keys));

  test("plugin names compare by simple name, without the Connector suffix", () => {
    expect(pluginKey("org.apache.kafka.connect.file.FileStreamSourceConnector")).toBe("filestreamsource");
    expect(pluginKey("FileStreamSource")).toBe("filestreamsource");
  });

  test("secret keys: password, secret, token, jaas, credentials, key as the last word, the configured globs", () => {
    const keys = new SecretKeys(["*.sig", "my.special"]);
    const secret = [
      "database.password",
      "aws.secret.key",
      "ssl.key",
      "privateKey",
      "api.key",
      "sasl.jaas.config",
      "gcp.credentials.json",
      "auth.token",
      "x.sig",
      "MY.SPECIAL",
    ];
    const plain = [
      "key.converter",
      "key.converter.schemas.enable",
      "topics",
      "tasks.max",
      "connector.class",
      "keys.count",
      "monkey.business",
    ];
    for (const k of secret) expect([k, keys.isSecret(k)]).toEqual([k, true]);
    for (const k of plain) expect([k, keys.isSecret(k)]).toEqual([k, false]);
  });
});

describe("22.8: secrets the masking knows by key and by the value's shape", () => {
  const keys = new SecretKeys();
  test("22.8: keys: user info, passphrases, authorization headers", () => {
    for (const k of [
      "schema.registry.basic.auth.user.info",
      "value.converter.basic.auth.user.info",
      "ssl.key.passphrase",
      "http.headers.authorization",
      "x.userinfo",
      "datadog.apikey",
    ])
      expect([k, keys.isSecret(k)]).toEqual([k, true]);
    for (const k of ["key.converter", "connection.uri", "connection.url", "topics", "user.name"])
      expect([k, keys.isSecret(k)]).toEqual([k, false]);
  });
  const shapes: [string, string][] = [
    ["mongodb://bob:s3cr3t@mongo:27017/db", `mongodb://bob:${MASK}@mongo:27017/db`],
    ["jdbc:postgresql://bob:s3cr3t@db/x", `jdbc:postgresql://bob:${MASK}@db/x`],
    ["https://tok3n@example.com/x", `https://${MASK}@example.com/x`],
    ["jdbc:sqlserver://db:1433;user=bob;password=s3cr3t;encrypt=true", `jdbc:sqlserver://db:1433;user=bob;password=${MASK};encrypt=true`],
    ["jdbc:mysql://db/x?user=bob&password=s3cr3t", `jdbc:mysql://db/x?user=bob&password=${MASK}`],
    ["https://acct.blob/c?sv=1&sig=abcd", `https://acct.blob/c?sv=1&sig=${MASK}`],
    ["Authorization: Bearer abc.def.ghi", `Authorization: Bearer ${MASK}`],
    [
      'org.x.PlainLoginModule required username="bob" password="s3cr3t";',
      `org.x.PlainLoginModule required username="bob" password="${MASK}";`,
    ],
    ["http://plain.host:8083/path", "http://plain.host:8083/path"],
    ["org.apache.kafka.connect.storage.StringConverter", "org.apache.kafka.connect.storage.StringConverter"],
  ];
  for (const [value, shown] of shapes) test(`22.8: value shape ${value}`, () => expect(masking.maskValueShapes(value)).toBe(shown));
  test("22.8: a text Connect wrote: shapes, and the request's secret values wherever they are quoted", () => {
    const config = { "my.basic.auth.user.info": "bob:pw-12345", "tasks.max": "1", url: "http://u:p4ss@h" };
    expect(keys.maskText("Invalid value bob:pw-12345 for x; Invalid value http://u:p4ss@h for url; tasks.max=1", config)).toBe(
      `Invalid value ${MASK} for x; Invalid value ${MASK} for url; tasks.max=1`,
    );
  });
});

describe("guard rails and secrets through the proxy", () => {
  let rt: TestRuntime;
  const made: string[] = [];
  let dir: string;

  beforeAll(async () => {
    rt = await connectRuntime([], { guardRails: { secretKeys: ["*.sig"] } });
    dir = mkdtempSync(join(tmpdir(), "loupe-connect-"));
  });
  afterAll(async () => {
    for (const name of made) await deleteDirect(name);
    await rt.dispose();
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  /** The configs each rail refuses: harmless ones, deleted at once when an admin makes them. */
  const railCases = (): [string, () => Record<string, unknown>, string][] => [
    [
      "the JNDI login module through consumer.override.sasl.jaas.config",
      () => heartbeatConfig({ "consumer.override.sasl.jaas.config": "com.sun.security.auth.module.JndiLoginModule required;" }),
      "consumer.override.sasl.jaas.config",
    ],
    [
      "the file source",
      () => {
        const file = join(dir, "in.txt");
        writeFileSync(file, "a line\n");
        return { "connector.class": "FileStreamSource", file, topic: `loupe-file-${Date.now()}`, "tasks.max": "1" };
      },
      "connector.class",
    ],
    ["a ${file:/etc/passwd:x} provider", () => heartbeatConfig({ "loupe.note": "${file:/etc/passwd:x}" }), "loupe.note"],
    [
      "a file: OAuth token endpoint",
      () => heartbeatConfig({ "source.cluster.sasl.oauthbearer.token.endpoint.url": "file:/etc/passwd" }),
      "source.cluster.sasl.oauthbearer.token.endpoint.url",
    ],
  ];

  for (const [what, config, key] of railCases()) {
    test(`${what}: 403 for write (create, config and validate), audited as a failure`, async () => {
      const name = connectorName("loupe rail");
      const cfg = config();
      const create = await rt.request(proxy("/connectors"), { method: "POST", role: "write", body: JSON.stringify({ name, config: cfg }) });
      expect(create.status).toBe(403);
      expect((await errorOf(create)).message).toContain(key);
      const put = await rt.request(proxy(`/connectors/${enc(name)}/config`), { method: "PUT", role: "write", body: JSON.stringify(cfg) });
      expect(put.status).toBe(403);
      const validate = await rt.request(proxy("/connector-plugins/MirrorHeartbeatConnector/config/validate"), {
        method: "PUT",
        role: "write",
        body: JSON.stringify(cfg),
      });
      expect(validate.status).toBe(403);
      // Nothing reached Connect.
      const listed = (await (await rt.request(proxy("/connectors"), { role: "nodata" })).json()) as string[];
      expect(listed).not.toContain(name);
      const entries = (await auditEntries(rt)).filter((e) => e.content.connector === name);
      expect(entries.map((e) => `${e.change} ${e.content.outcome}`)).toEqual(["UPDATE FAILURE", "ADD FAILURE"]);
      for (const e of entries) {
        expect(e.content.reason).toStartWith("FORBIDDEN: Loupe's guard rails refuse");
        expect(e.content.guardRailsRefused).toContain(key);
      }
      const denied = (await auditEntries(rt, "ACCESS")).find((e) => e.userId === "wanda" && e.content.guardRailsRefused?.includes(key));
      expect(denied).toMatchObject({ change: "DENY", content: { outcome: "FAILURE", alias: ALIAS, plugin: "MirrorHeartbeatConnector" } });
    });

    test(`${what}: allowed for admin and audited with the rail overridden`, async () => {
      const name = connectorName("loupe rail admin");
      made.push(name);
      const res = await settled(rt, proxy("/connectors"), {
        method: "POST",
        role: "admin",
        body: JSON.stringify({ name, config: config() }),
      });
      expect([res.status, res.status === 201 ? "" : await res.text()]).toEqual([201, ""]);
      // Deleted at once: nothing reading files or holding odd configs stays.
      expect((await settled(rt, proxy(`/connectors/${enc(name)}`), { method: "DELETE", role: "admin" })).status).toBe(204);
      const added = (await auditEntries(rt)).find((e) => e.content.connector === name && e.change === "ADD")!;
      expect(added).toMatchObject({ userId: "alice", content: { outcome: "SUCCESS" } });
      expect(added.content.guardRailsOverridden).toContain(key);
    }, 60_000);
  }

  test("guard rails off: the write role may create what they refuse", async () => {
    const off = await connectRuntime([], { guardRails: { enabled: false } });
    try {
      const res = await off.request(proxy("/connector-plugins/MirrorHeartbeatConnector/config/validate"), {
        method: "PUT",
        role: "write",
        body: JSON.stringify(heartbeatConfig({ "consumer.override.sasl.jaas.config": "x" })),
      });
      expect(res.status).toBe(200);
    } finally {
      await off.dispose();
    }
  });

  test("secrets: masked for read and nodata, shown to write and admin, never in the audit table", async () => {
    const name = connectorName("loupe secret");
    made.push(name);
    const secrets = {
      "database.password": "hunter2-pw",
      "aws.secret.key": "s3cr3t-aws",
      "ssl.key": "pem-key",
      "webhook.sig": "custom-sig",
    };
    await createHeartbeat(rt, name, secrets, "write");
    await runningThrough(rt, name);
    const base = proxy(`/connectors/${enc(name)}`);
    const masked = Object.fromEntries(Object.keys(secrets).map((k) => [k, MASK]));
    for (const role of ["read", "nodata"] as const) {
      expect(((await (await rt.request(base, { role })).json()) as { config: object }).config).toMatchObject(masked);
      expect(await (await rt.request(`${base}/config`, { role })).json()).toMatchObject(masked);
      const tasks = (await (await rt.request(`${base}/tasks`, { role })).json()) as { config: object }[];
      expect(tasks[0]!.config).toMatchObject(masked);
      const expanded = (await (await rt.request(proxy("/connectors?expand=info&expand=status"), { role })).json()) as Record<
        string,
        { info: { config: object }; status: { connector: { state: string } } }
      >;
      expect(expanded[name]!.info.config).toMatchObject(masked);
      expect(expanded[name]!.status.connector.state).toBe("RUNNING");
      const text = JSON.stringify(expanded);
      for (const v of Object.values(secrets)) expect(text).not.toContain(v);
    }
    for (const role of ["write", "admin"] as const)
      expect(await (await rt.request(`${base}/config`, { role })).json()).toMatchObject(secrets);

    // A change carrying the secrets; then the audit table as stored.
    const put = await settled(rt, `${base}/config`, { method: "PUT", role: "write", body: JSON.stringify(heartbeatConfig(secrets)) });
    expect(put.status).toBe(200);
    const rows = await rt.store.db.selectFrom("audit").select("content").where("type", "=", "CONNECTOR").execute();
    const stored = rows.map((r) => r.content).join("\n");
    expect(stored).toContain(name);
    for (const v of Object.values(secrets)) expect(stored).not.toContain(v);
    const entry = (await auditEntries(rt)).find((e) => e.content.connector === name && e.change === "UPDATE")!;
    expect(JSON.parse(entry.content.config!)).toMatchObject(masked);
  }, 60_000);

  test("22.8: secrets under keys and in values the masking did not know: masked for read and nodata, in Connect's refusal and in the audit", async () => {
    const name = connectorName("loupe secret2");
    made.push(name);
    const secrets = {
      "loupe.basic.auth.user.info": "bob:SECRET-userinfo",
      "loupe.ssl.key.passphrase": "SECRET-passphrase",
      "http.headers.authorization": "Bearer SECRET-header",
    };
    const shaped = {
      "connection.uri": "mongodb://bob:SECRET-uri@mongo:27017/db",
      "connection.url": "jdbc:sqlserver://db:1433;user=bob;password=SECRET-url",
    };
    await createHeartbeat(
      rt,
      name,
      { ...secrets, ...shaped, "key.converter": "org.apache.kafka.connect.storage.StringConverter" },
      "write",
    );
    await runningThrough(rt, name);
    const base = proxy(`/connectors/${enc(name)}`);
    for (const role of ["read", "nodata"] as const) {
      const texts = [
        await (await rt.request(base, { role })).text(),
        await (await rt.request(`${base}/tasks`, { role })).text(),
        await (await rt.request(`${base}/status`, { role })).text(),
        await (await rt.request(proxy("/connectors?expand=info&expand=status"), { role })).text(),
      ];
      const config = (await (await rt.request(`${base}/config`, { role })).json()) as Record<string, string>;
      expect(config).toMatchObject({
        ...Object.fromEntries(Object.keys(secrets).map((k) => [k, MASK])),
        "connection.uri": `mongodb://bob:${MASK}@mongo:27017/db`,
        "connection.url": `jdbc:sqlserver://db:1433;user=bob;password=${MASK}`,
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
      });
      for (const text of [...texts, JSON.stringify(config)]) expect(text).not.toContain("SECRET-");
    }
    // Connect's refusal quotes the value it refuses: masked in the answer and in the audit entry.
    const refused = await settled(rt, `${base}/config`, {
      method: "PUT",
      role: "write",
      body: JSON.stringify(heartbeatConfig({ ...secrets, "emit.heartbeats.interval.seconds": "http://bob:SECRET-refusal@x" })),
    });
    expect(refused.status).toBe(400);
    const message = (await refused.json()) as { error_code: number; message: string };
    expect(message).toEqual({
      error_code: 400,
      message: expect.stringContaining(`Invalid value ${MASK} for configuration emit.heartbeats.interval.seconds`),
    });
    const entry = (await auditEntries(rt)).find((e) => e.content.connector === name && e.change === "UPDATE")!;
    expect(entry.content).toMatchObject({
      outcome: "FAILURE",
      connectError: expect.stringContaining(`Invalid value ${MASK} for configuration`),
    });
    const rows = await rt.store.db.selectFrom("audit").select("content").execute();
    const stored = rows.map((r) => r.content).join("\n");
    expect(stored).toContain(name);
    expect(stored).not.toContain("SECRET-");
  }, 60_000);

  test("a creation Connect refuses leaves an entry without the config's secrets", async () => {
    const name = connectorName("loupe intent");
    const res = await settled(rt, proxy("/connectors"), {
      method: "POST",
      role: "write",
      body: JSON.stringify({
        name,
        config: heartbeatConfig({ "tasks.max": "zero", "ssl.key": "pem-in-intent", "webhook.sig": "sig-in-intent" }),
      }),
    });
    // The name, the guard rails and the topics pass; Connect refuses the value.
    expect([res.status, await res.text()]).toEqual([400, expect.stringContaining("Invalid value zero for configuration tasks.max")]);
    const rows = await rt.store.db.selectFrom("audit").select("content").execute();
    const stored = rows.map((r) => r.content).join("\n");
    expect(stored).toContain(name);
    expect(stored).not.toContain("pem-in-intent");
    expect(stored).not.toContain("sig-in-intent");
  });

  test("the alias of the audit entries is the proxied one", async () => {
    const entries = await auditEntries(rt);
    expect(entries.every((e) => e.content.alias === ALIAS || e.content.clusterAlias === ALIAS)).toBe(true);
  });
});
