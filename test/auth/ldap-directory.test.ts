/**
 * LdapDirectory against the real slapd of the run (LDAP_URL), and against directories of the
 * test's own for what would disturb others: TLS with a CA made here with openssl, a frozen, a
 * killed and a slow directory. No mock: a TCP relay in front of slapd shows what goes over
 * which connection and adds latency.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect, createServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Attribute, Change, Client } from "ldapts";
import { type LdapConfig, ldapSchema } from "../../src/config/ldap.ts";
import { parseConfig } from "../../src/config/load.ts";
import { type DirectoryUser, escapeFilterValue, LdapDirectory } from "../../src/domains/auth/ldap.ts";
import { AppError } from "../../src/errors.ts";
import { LogHub } from "../../src/log/logger.ts";
import {
  type Cluster,
  freePort,
  freezeService,
  killService,
  LDAP_GROUPS_DN,
  LDAP_PEOPLE_DN,
  LDAP_USERS,
  ldapEnv,
  ldapGroupDn,
  ldapUserDn,
  restartService,
  startCluster,
  thawService,
} from "../cluster/cluster.ts";
import { waitFor } from "../helpers/wait.ts";

// Throws when LDAP_URL is missing: the file fails rather than passing without a directory.
const env = ldapEnv();

/** How the seeded groups map: by cn, by a DN spelled differently from the directory's, to two groups. */
const MAPPINGS = {
  "platform-admins": ["admins"],
  "CN=Payments-Team, OU=Groups,DC=loupe, dc=test": ["payments"],
  "Analytics-Readers": ["analysts", "readers"],
};
const MAPPED: Record<string, string[]> = {
  "platform-admins": ["admins"],
  "payments-team": ["payments"],
  "analytics-readers": ["analysts", "readers"],
};
const expectedGroups = (directoryGroups: readonly string[]) =>
  [...new Set(["everyone", ...directoryGroups.flatMap((g) => MAPPED[g] ?? [])])].sort();

function config(over: Record<string, unknown> = {}): LdapConfig {
  return ldapSchema.parse({
    url: env.url,
    bindDn: env.bindDn,
    bindPassword: env.bindPassword,
    userBase: LDAP_PEOPLE_DN,
    groupMappings: MAPPINGS,
    defaultGroups: ["everyone"],
    connectTimeout: "3s",
    timeout: "3s",
    ...over,
  });
}

const directories: LdapDirectory[] = [];
const adminClients: Client[] = [];
const tempDirs: string[] = [];

/** A directory client whose log lines the test can read. */
function directory(over: Record<string, unknown> = {}): { dir: LdapDirectory; lines: string[] } {
  const lines: string[] = [];
  const hub = new LogHub("debug", { write: (line) => lines.push(line) });
  const dir = new LdapDirectory(config(over), hub.logger("ldap"));
  directories.push(dir);
  return { dir, lines };
}

async function admin(url = env.url): Promise<Client> {
  const c = new Client({ url, timeout: 5_000, connectTimeout: 5_000 });
  adminClients.push(c);
  await c.bind(env.adminDn, env.adminPassword);
  return c;
}

const hex = () => randomBytes(4).toString("hex");

/** A user of this test only (the seeded organisation stays as the README describes it). */
async function tempUser(
  a: Client,
  opts: { uid?: string; dn?: string } = {},
): Promise<{ uid: string; dn: string; password: string; remove: () => Promise<void> }> {
  const uid = opts.uid ?? `temp-${hex()}`;
  const dn = opts.dn ?? `cn=temp-${hex()},${LDAP_PEOPLE_DN}`;
  const password = `pw-${hex()}`;
  await a.add(dn, { objectClass: "inetOrgPerson", uid, cn: uid, sn: uid, mail: `${hex()}@loupe.test`, userPassword: password });
  return { uid, dn, password, remove: () => a.del(dn).catch(() => {}) };
}

/** A groupOfNames of this test only; `anchor` keeps it valid when the user under test leaves it. */
async function tempGroup(a: Client, anchor: string): Promise<{ cn: string; dn: string; remove: () => Promise<void> }> {
  const cn = `temp-group-${hex()}`;
  const dn = ldapGroupDn(cn);
  await a.add(dn, { objectClass: "groupOfNames", cn, member: anchor });
  return { cn, dn, remove: () => a.del(dn).catch(() => {}) };
}

const member = (operation: "add" | "delete", dn: string) =>
  new Change({ operation, modification: new Attribute({ type: "member", values: [dn] }) });

/** The AppError code a promise rejects with, or "ok". */
async function outcome(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return "ok";
  } catch (err) {
    if (err instanceof AppError) return err.code;
    throw err;
  }
}

async function timed<T>(p: () => Promise<T>): Promise<{ ms: number; result: T | AppError }> {
  const t0 = performance.now();
  const result = await p().catch((err: unknown) => {
    if (err instanceof AppError) return err;
    throw err;
  });
  return { ms: performance.now() - t0, result };
}

interface Relay {
  url: string;
  /** The bytes each accepted connection sent towards the directory, in order of connection. */
  sent: Buffer[][];
  /** Client connections still open. */
  open(): number;
  close(): Promise<void>;
}

/**
 * A TCP relay to `target`: records what the client sends on each connection, and delays each
 * chunk towards the directory by `delayMs` (a slow network or directory) when given.
 */
async function relay(target: string, opts: { delayMs?: number } = {}): Promise<Relay> {
  const { hostname, port } = new URL(target);
  const sent: Buffer[][] = [];
  const sockets = new Set<Socket>();
  const clients = new Set<Socket>();
  const server = createServer((client) => {
    const chunks: Buffer[] = [];
    sent.push(chunks);
    clients.add(client);
    client.on("close", () => clients.delete(client));
    const upstream = connect(Number(port), hostname);
    sockets.add(client).add(upstream);
    let queue = Promise.resolve();
    client.on("data", (chunk: Buffer) => {
      chunks.push(Buffer.from(chunk));
      if (!opts.delayMs) upstream.write(chunk);
      else
        queue = queue
          .then(() => new Promise((r) => setTimeout(r, opts.delayMs)))
          .then(() => {
            if (!upstream.destroyed) upstream.write(chunk);
          });
    });
    upstream.on("data", (chunk: Buffer) => client.write(chunk));
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    for (const s of [client, upstream]) {
      s.on("close", end);
      s.on("error", end);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address() as { port: number };
  return {
    url: `${target.startsWith("ldaps:") ? "ldaps" : "ldap"}://127.0.0.1:${address.port}`,
    sent,
    open: () => clients.size,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

const holds = (chunks: Buffer[], text: string) => Buffer.concat(chunks).includes(Buffer.from(text, "utf8"));

afterAll(async () => {
  await Promise.all(directories.map((d) => d.close()));
  await Promise.all(adminClients.map((c) => c.unbind().catch(() => {})));
  for (const d of tempDirs) rmSync(d, { recursive: true, force: true });
});

describe("escapeFilterValue (RFC 4515)", () => {
  test.each([
    ["alice", "alice"],
    ["*", "\\2a"],
    [")(", "\\29\\28"],
    ["\\", "\\5c"],
    ["\0", "\\00"],
    ["alice)(uid=*", "alice\\29\\28uid=\\2a"],
    ["a\nb\x7f", "a\\0ab\\7f"],
    ["zoë", "zo\\c3\\ab"],
    ["O'Neil & co", "O'Neil & co"],
  ])("%p -> %p", (value, escaped) => {
    expect(escapeFilterValue(value)).toBe(escaped);
  });
});

describe("the ldap configuration", () => {
  const base = { url: "ldap://dir:389", bindDn: "cn=svc", bindPassword: "x", userBase: "ou=people" };

  test("defaults", () => {
    const cfg = ldapSchema.parse(base);
    expect(cfg).toMatchObject({
      url: ["ldap://dir:389"],
      startTls: false,
      rejectUnauthorized: true,
      userFilter: "(uid={user})",
      emailAttribute: "mail",
      groups: { source: "memberOf", filter: "(member={dn})", nameAttribute: "cn" },
      groupMappings: {},
      defaultGroups: [],
      connectTimeout: 5_000,
      timeout: 5_000,
      refreshInterval: 300_000,
    });
  });

  test("a list of URLs, durations as text, inside the whole configuration", () => {
    const cfg = parseConfig({ ldap: { ...base, url: ["ldaps://a:636", "ldaps://b:636"], timeout: "2s", refreshInterval: "1m" } });
    expect(cfg.ldap).toMatchObject({ url: ["ldaps://a:636", "ldaps://b:636"], timeout: 2_000, refreshInterval: 60_000 });
    expect(parseConfig({}).ldap).toBeUndefined();
  });

  test.each([
    ["an http URL", { url: "http://dir" }, "url", "expected ldap://"],
    ["no password", { bindPassword: undefined }, "bindPassword", "exactly one of bindPassword and bindPasswordFile"],
    ["both passwords", { bindPasswordFile: "/run/secret" }, "bindPassword", "exactly one"],
    ["a filter without {user}", { userFilter: "(uid=alice)" }, "userFilter", "must contain {user}"],
    ["a group filter without {dn} or {user}", { groups: { filter: "(member=x)" } }, "groups.filter", "{dn} or {user}"],
    ["a group search without base", { groups: { source: "search" } }, "groups.base", "needs its base DN"],
    ["StartTLS on ldaps", { url: "ldaps://dir", startTls: true }, "startTls", "StartTLS is for ldap://"],
    ["a CA with neither ldaps nor StartTLS", { ca: "/etc/ca.pem" }, "ca", "only with an ldaps:// URL or startTls"],
    ["a mapping to an invalid group name", { groupMappings: { admins: ["no spaces"] } }, "groupMappings.admins.0", "letters"],
    ["a zero timeout", { timeout: 0 }, "timeout", "above 0"],
    ["an unknown key", { bindPasword: "typo" }, "", "bindPasword"],
  ])("%s is refused, naming the key", (_what, over, key, message) => {
    const result = ldapSchema.safeParse({ ...base, ...over });
    expect(result.success).toBe(false);
    const issues = result.error!.issues.map((i) => ({ key: i.path.join("."), message: i.message }));
    expect(issues).toContainEqual({ key, message: expect.stringContaining(message) });
  });

  test("Active Directory's nested-group match (an extensible filter) is a valid group filter", () => {
    const log = new LogHub("debug", { write: () => {} }).logger("ldap");
    const cfg = config({ groups: { source: "search", base: "dc=corp", filter: "(member:1.2.840.113556.1.4.1941:={dn})" } });
    expect(() => new LdapDirectory(cfg, log)).not.toThrow();
  });

  test("an invalid filter stops start-up with the key named", () => {
    const lines: string[] = [];
    const log = new LogHub("debug", { write: (l) => lines.push(l) }).logger("ldap");
    expect(() => new LdapDirectory(config({ userFilter: "(uid={user}" }), log)).toThrow(/ldap\.userFilter is not a valid LDAP filter/);
  });
});

describe("login and lookup against the directory", () => {
  test.each(
    LDAP_USERS.flatMap((u) => [
      ["memberOf", u.uid, u],
      ["search", u.uid, u],
    ]) as [string, string, (typeof LDAP_USERS)[number]][],
  )("groups from %s: %s logs in with their groups mapped by cn and by DN", async (source, _uid, u) => {
    const { dir } = directory(source === "search" ? { groups: { source: "search", base: LDAP_GROUPS_DN } } : {});
    const user = await dir.authenticate(u.uid, u.password);
    expect(user).toEqual({
      name: u.uid,
      dn: ldapUserDn(u.uid),
      email: u.mail,
      directoryGroups: u.groups.map(ldapGroupDn).sort(),
      groups: expectedGroups(u.groups),
    } satisfies DirectoryUser);
    expect(await dir.lookup(u.uid)).toEqual(user);
  });

  test("the name matches whatever its case, and is answered as the directory spells it", async () => {
    const { dir } = directory();
    expect((await dir.authenticate("ALICE", "alice-ldap-pass"))?.name).toBe("alice");
    // The directory ignores spaces around a value: the name must not make a second identity.
    expect((await dir.authenticate(" alice ", "alice-ldap-pass"))?.name).toBe("alice");
    expect((await dir.lookup("Bob"))?.name).toBe("bob");
  });

  test.each([
    ["several terms (as for Active Directory)", "(&(objectClass=inetOrgPerson)(uid={user}))", "Carol", "carol"],
    ["the mail address", "(mail={user})", "Carol@Loupe.Test", "carol@loupe.test"],
    // One person, one Loupe user however they typed it: named by the first attribute compared.
    ["either uid or mail", "(|(uid={user})(mail={user}))", "carol@loupe.test", "carol"],
  ])("a user filter matching %s", async (_what, userFilter, typed, name) => {
    const { dir } = directory({ userFilter });
    expect(await dir.authenticate(typed, "carol-ldap-pass")).toMatchObject({ name, dn: ldapUserDn("carol"), email: "carol@loupe.test" });
    expect(await dir.authenticate(typed, "wrong")).toBeNull();
  });

  test("a name longer than any directory holds is refused without a search", async () => {
    const r = await relay(env.url);
    try {
      const { dir } = directory({ url: r.url });
      expect(await dir.authenticate("a".repeat(513), "alice-ldap-pass")).toBeNull();
      expect(await dir.lookup("a".repeat(513))).toBeNull();
      expect(r.sent).toEqual([]);
    } finally {
      await r.close();
    }
  });

  test("once closed, it answers 503 and opens no connection", async () => {
    const r = await relay(env.url);
    try {
      const { dir } = directory({ url: r.url });
      const pending = dir.lookup("alice");
      await dir.close();
      expect((await pending)?.name).toBe("alice");
      const sent = r.sent.length;
      expect(await outcome(dir.authenticate("alice", "alice-ldap-pass"))).toBe("UNAVAILABLE");
      expect(await outcome(dir.lookup("alice"))).toBe("UNAVAILABLE");
      expect(r.sent.length).toBe(sent);
    } finally {
      await r.close();
    }
  });

  test.each([
    ["a wrong password", "alice", "bob-ldap-pass"],
    ["a password of another case", "alice", "ALICE-LDAP-PASS"],
    ["an unknown user", `nobody-${hex()}`, "alice-ldap-pass"],
    ["the service account's name with its password", "loupe-svc", env.bindPassword],
  ])("%s: null", async (_what, name, password) => {
    const { dir } = directory();
    expect(await dir.authenticate(name, password)).toBeNull();
  });

  test("an empty password is refused before anything is sent to the directory", async () => {
    const r = await relay(env.url);
    try {
      const { dir } = directory({ url: r.url });
      expect(await dir.authenticate("alice", "")).toBeNull();
      expect(await dir.authenticate("", "alice-ldap-pass")).toBeNull();
      expect(r.sent).toEqual([]);
      // Even with the directory unreachable: no bind was tried, so nothing could fail.
      const { dir: unreachable } = directory({ url: `ldap://127.0.0.1:${await freePort()}` });
      expect(await unreachable.authenticate("alice", "")).toBeNull();
    } finally {
      await r.close();
    }
  });

  // Unescaped, each of these would widen the filter to other entries (`al*` finds alice, and
  // with her password would log in) or break it.
  test.each(["*", "al*", "*)(uid=*", ")(", "\\", "\\2a", "\0", "alice\0", "alice)(uid=*", "alice)(|(uid=*", "*)(|(objectClass=*)"])(
    "the injection %p matches nothing",
    async (name) => {
      const { dir, lines } = directory();
      expect(await dir.authenticate(name, "alice-ldap-pass")).toBeNull();
      expect(await dir.lookup(name)).toBeNull();
      expect(lines.join("\n")).toContain("unknown user or wrong password");
    },
  );

  test("a name with filter characters in it is found literally, and a non-ASCII one too", async () => {
    const a = await admin();
    const odd = await tempUser(a, { uid: `a*(b)\\c-${hex()}` });
    const accented = await tempUser(a, { uid: `zoë-ünïcødé-${hex()}` });
    try {
      const { dir } = directory();
      expect((await dir.authenticate(odd.uid, odd.password))?.dn).toBe(odd.dn);
      expect((await dir.authenticate(accented.uid, accented.password))?.name).toBe(accented.uid);
      expect((await dir.lookup(accented.uid))?.dn).toBe(accented.dn);
    } finally {
      await odd.remove();
      await accented.remove();
    }
  });

  test("a name that matches two entries logs no one in, even with the right password", async () => {
    const a = await admin();
    const uid = `temp-twin-${hex()}`;
    const one = await tempUser(a, { uid });
    const two = await tempUser(a, { uid });
    try {
      const { dir, lines } = directory();
      expect(await dir.authenticate(uid, one.password)).toBeNull();
      expect(await dir.lookup(uid)).toBeNull();
      expect(lines.join("\n")).toContain("more than one entry");
      await two.remove();
      expect((await dir.authenticate(uid, one.password))?.dn).toBe(one.dn);
    } finally {
      await one.remove();
      await two.remove();
    }
  });

  test("the user's bind goes over a connection of its own, never the service account's", async () => {
    const r = await relay(env.url);
    try {
      const { dir } = directory({ url: r.url });
      expect((await dir.authenticate("alice", "alice-ldap-pass"))?.name).toBe("alice");
      await waitFor(() => r.open() === 0, { what: "the login's connections closed" });
      const withPassword = r.sent.filter((c) => holds(c, "alice-ldap-pass"));
      const asService = r.sent.filter((c) => holds(c, env.bindDn));
      expect(withPassword).toHaveLength(1);
      expect(asService).toHaveLength(1);
      expect(holds(withPassword[0]!, env.bindDn)).toBe(false);
      expect(holds(asService[0]!, "alice-ldap-pass")).toBe(false);
      // Two connections in all: the service account's and the user's.
      expect(r.sent).toHaveLength(2);
    } finally {
      await r.close();
    }
  });

  test.each(["memberOf", "search"])("groups from %s: a membership change shows on the next login and lookup", async (source) => {
    const a = await admin();
    const anchor = await tempUser(a);
    const user = await tempUser(a);
    const group = await tempGroup(a, anchor.dn);
    try {
      const { dir } = directory({
        groupMappings: { ...MAPPINGS, [group.cn]: ["temp-by-cn"], [group.dn.toUpperCase()]: ["temp-by-dn"] },
        ...(source === "search" ? { groups: { source: "search", base: LDAP_GROUPS_DN } } : {}),
      });
      expect(await dir.authenticate(user.uid, user.password)).toMatchObject({ directoryGroups: [], groups: ["everyone"] });
      await a.modify(group.dn, member("add", user.dn));
      const inGroup = { directoryGroups: [group.dn], groups: ["everyone", "temp-by-cn", "temp-by-dn"] };
      expect(await dir.authenticate(user.uid, user.password)).toMatchObject(inGroup);
      expect(await dir.lookup(user.uid)).toMatchObject(inGroup);
      await a.modify(group.dn, member("delete", user.dn));
      expect(await dir.lookup(user.uid)).toMatchObject({ directoryGroups: [], groups: ["everyone"] });
      expect(await dir.authenticate(user.uid, user.password)).toMatchObject({ directoryGroups: [], groups: ["everyone"] });
    } finally {
      await group.remove();
      await user.remove();
      await anchor.remove();
    }
  });

  test.each(["memberOf", "search"])("groups from %s: a DN with escaped characters finds its groups", async (source) => {
    const a = await admin();
    const anchor = await tempUser(a);
    const user = await tempUser(a, { dn: `cn=Doe\\, Jane \\2B ${hex()} ö,${LDAP_PEOPLE_DN}` });
    const group = await tempGroup(a, anchor.dn);
    try {
      await a.modify(group.dn, member("add", user.dn));
      const { dir } = directory({
        groupMappings: { [group.cn.toUpperCase()]: ["temp-by-cn"] },
        ...(source === "search" ? { groups: { source: "search", base: LDAP_GROUPS_DN } } : {}),
      });
      expect(await dir.authenticate(user.uid, user.password)).toMatchObject({
        directoryGroups: [group.dn],
        groups: ["everyone", "temp-by-cn"],
      });
    } finally {
      await group.remove();
      await user.remove();
      await anchor.remove();
    }
  });

  test.each(["memberOf", "search"])("groups from %s: named by an attribute other than the one in their DN", async (source) => {
    const a = await admin();
    const user = await tempUser(a);
    const cn = `temp-group-${hex()}`;
    const dn = ldapGroupDn(cn);
    const ou = `Team ${hex()}`;
    await a.add(dn, { objectClass: "groupOfNames", cn, ou, member: user.dn });
    try {
      const { dir } = directory({
        groupMappings: { [ou.toLowerCase()]: ["by-ou"], [cn]: ["by-cn-never"] },
        groups: { nameAttribute: "ou", ...(source === "search" ? { source: "search", base: LDAP_GROUPS_DN } : {}) },
      });
      expect(await dir.authenticate(user.uid, user.password)).toMatchObject({ directoryGroups: [dn], groups: ["by-ou", "everyone"] });
    } finally {
      await a.del(dn).catch(() => {});
      await user.remove();
    }
  });

  test("a user deleted from the directory is gone on the next lookup", async () => {
    const a = await admin();
    const user = await tempUser(a);
    const { dir } = directory();
    expect((await dir.lookup(user.uid))?.dn).toBe(user.dn);
    await user.remove();
    expect(await dir.lookup(user.uid)).toBeNull();
    expect(await dir.authenticate(user.uid, user.password)).toBeNull();
  });

  test("the service account's password may come from a file", async () => {
    const dirPath = mkdtempSync(join(tmpdir(), "loupe-ldap-secret-"));
    tempDirs.push(dirPath);
    const file = join(dirPath, "bind-password");
    writeFileSync(file, `${env.bindPassword}\n`);
    const { dir } = directory({ bindPassword: undefined, bindPasswordFile: file });
    expect((await dir.authenticate("bob", "bob-ldap-pass"))?.name).toBe("bob");
  });

  test("a refused service account is 503, with its password in no message and no log line", async () => {
    const wrong = `wrong-svc-pass-${hex()}`;
    const { dir, lines } = directory({ bindPassword: wrong });
    const err = await dir.authenticate("alice", "alice-ldap-pass").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).status).toBe(503);
    expect((err as AppError).message).not.toContain(wrong);
    expect(await outcome(dir.lookup("alice"))).toBe("UNAVAILABLE");
    expect(lines.join("\n")).toContain("service account bind refused");
    expect(lines.join("\n")).not.toContain(wrong);
    expect(lines.join("\n")).not.toContain("alice-ldap-pass");
  });

  test("with several URLs, one that is down is skipped", async () => {
    const { dir, lines } = directory({ url: [`ldap://127.0.0.1:${await freePort()}`, env.url] });
    expect((await dir.authenticate("carol", "carol-ldap-pass"))?.name).toBe("carol");
    expect(lines.join("\n")).toContain("trying the next");
  });

  test("log lines hold names and outcomes, never a password nor a name that did not resolve", async () => {
    const { dir, lines } = directory();
    const typedAsName = `hunter2-${hex()}`;
    await dir.authenticate("alice", "alice-ldap-pass");
    await dir.authenticate("bob", "wrong-pass-for-bob");
    await dir.authenticate(typedAsName, "carol-ldap-pass");
    const text = lines.join("\n");
    for (const secret of ["alice-ldap-pass", "wrong-pass-for-bob", "carol-ldap-pass", env.bindPassword, typedAsName])
      expect(text).not.toContain(secret);
    expect(lines.map((l) => JSON.parse(l)).map((l) => [l.msg, l.user])).toEqual([
      ["LDAP login", "alice"],
      ["LDAP login failed: wrong password", "bob"],
      ["LDAP login failed: unknown user or wrong password", undefined],
    ]);
  });

  test("an unknown user costs the directory the same work as a wrong password: a search, then a bind", async () => {
    const traffic = async (name: string, password: string) => {
      const r = await relay(env.url);
      try {
        const { dir } = directory({ url: r.url });
        expect(await dir.authenticate(name, password)).toBeNull();
        return r.sent.map((chunks) => ({ chunks: chunks.length, password: holds(chunks, password) }));
      } finally {
        await r.close();
      }
    };
    const unknown = await traffic(`nobody-${hex()}`, `pw-${hex()}`);
    expect(unknown).toEqual(await traffic("alice", `pw-${hex()}`));
    expect(unknown.map((c) => c.password)).toEqual([false, true]);
  });

  test("an unknown user and a wrong password take the same time", async () => {
    const { dir } = directory();
    const unknown: number[] = [];
    const wrong: number[] = [];
    await dir.authenticate("alice", "warm-up");
    for (let i = 0; i < 15; i++) {
      // Interleaved, so a burst of load on the machine hits both alike.
      const u = await timed(() => dir.authenticate(`nobody-${hex()}`, "alice-ldap-pass"));
      const w = await timed(() => dir.authenticate("alice", `wrong-${hex()}`));
      expect([u.result, w.result]).toEqual([null, null]);
      unknown.push(u.ms);
      wrong.push(w.ms);
    }
    const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const [mu, mw] = [median(unknown), median(wrong)];
    console.log(`[ldap timing] median unknown user ${mu.toFixed(2)} ms, wrong password ${mw.toFixed(2)} ms`);
    expect(Math.abs(mu - mw)).toBeLessThan(50 + 0.5 * Math.max(mu, mw));
  }, 60_000);
});

/** True when every thread of `pid` is stopped (state T in /proc): a frozen process answers nothing. */
function stopped(pid: number): boolean {
  const tasks = readdirSync(`/proc/${pid}/task`);
  return tasks.length > 0 && tasks.every((t) => /^\d+ \(.*\) [tT] /.test(readFileSync(`/proc/${pid}/task/${t}/stat`, "utf8")));
}

/** A CA and a certificate for 127.0.0.1 signed by it, or (serverFor absent) a CA alone. */
function openssl(dir: string, name: string, serverFor?: { ca: string; caKey: string }): { cert: string; key: string } {
  const f = (file: string) => join(dir, `${name}-${file}`);
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", f("key.pem")];
  const steps = serverFor
    ? [
        ["req", ...ec, "-out", f("csr.pem"), "-subj", "/CN=127.0.0.1"],
        ["x509", "-req", "-in", f("csr.pem"), "-CA", serverFor.ca, "-CAkey", serverFor.caKey, "-CAcreateserial", "-days", "2"].concat([
          "-extfile",
          f("san.ext"),
          "-out",
          f("cert.pem"),
        ]),
      ]
    : [["req", "-x509", ...ec, "-out", f("cert.pem"), "-days", "2", "-subj", `/CN=Loupe test ${name}`]];
  writeFileSync(f("san.ext"), "subjectAltName=IP:127.0.0.1\n");
  for (const args of steps) {
    const res = spawnSync("openssl", args, { encoding: "utf8" });
    if (res.status !== 0) throw new Error(`openssl ${args[0]} failed: ${res.stderr}`);
  }
  return { cert: f("cert.pem"), key: f("key.pem") };
}

describe("a directory of the test's own: TLS, down, frozen, slow", () => {
  let cluster: Cluster | undefined;
  let ca: { cert: string; key: string };
  let otherCa: { cert: string; key: string };
  let own: Record<string, string>;

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), "loupe-ldap-tls-"));
    tempDirs.push(dir);
    ca = openssl(dir, "ca");
    otherCa = openssl(dir, "other-ca");
    const server = openssl(dir, "server", { ca: ca.cert, caKey: ca.key });
    // Seeding allows each write 2 s: on a machine loaded enough to miss that, try again.
    for (let attempt = 1; ; attempt++) {
      try {
        cluster = await startCluster({
          services: ["ldap"],
          ownerPid: process.pid,
          ldapTls: { certFile: server.cert, keyFile: server.key },
        });
        break;
      } catch (err) {
        if (attempt >= 3 || !/did not take its seed data/.test(String(err))) throw err;
      }
    }
    own = cluster.env;
  }, 60_000);

  afterAll(async () => {
    if (!cluster) return;
    thawService(cluster.services[0]!);
    await cluster.stop({ graceMs: 2_000 });
  });

  const ldap = () => cluster!.services[0]!;
  const ownConfig = (over: Record<string, unknown>) => ({ bindDn: own.LDAP_BIND_DN, bindPassword: own.LDAP_BIND_PASSWORD, ...over });

  test.each([
    ["ldaps with the CA", () => ({ url: own.LDAPS_URL, ca: ca.cert })],
    ["StartTLS with the CA", () => ({ url: own.LDAP_URL, startTls: true, ca: ca.cert })],
    [
      "ldaps with another CA, certificates unchecked (insecure)",
      () => ({ url: own.LDAPS_URL, ca: otherCa.cert, rejectUnauthorized: false }),
    ],
  ])("%s logs in", async (_what, over) => {
    const { dir } = directory(ownConfig(over()));
    expect((await dir.authenticate("dave", "dave-ldap-pass"))?.groups).toEqual(expectedGroups(["payments-team", "analytics-readers"]));
  });

  test.each([
    ["ldaps with another CA", () => ({ url: own.LDAPS_URL, ca: otherCa.cert })],
    ["ldaps with the system's CAs only", () => ({ url: own.LDAPS_URL })],
    ["StartTLS with another CA", () => ({ url: own.LDAP_URL, startTls: true, ca: otherCa.cert })],
  ])("%s fails closed: 503, the reason logged", async (_what, over) => {
    const { dir, lines } = directory(ownConfig(over()));
    expect(await outcome(dir.authenticate("dave", "dave-ldap-pass"))).toBe("UNAVAILABLE");
    expect(await outcome(dir.lookup("dave"))).toBe("UNAVAILABLE");
    expect(lines.join("\n")).toMatch(/directory is unavailable.*(certificate|CERT)/i);
  });

  test("with StartTLS no password crosses the network in the clear", async () => {
    const r = await relay(own.LDAP_URL!);
    try {
      const { dir } = directory(ownConfig({ url: r.url, startTls: true, ca: ca.cert }));
      expect((await dir.authenticate("erin", "erin-ldap-pass"))?.name).toBe("erin");
      expect(r.sent.length).toBeGreaterThanOrEqual(2);
      for (const chunks of r.sent) {
        expect(holds(chunks, "erin-ldap-pass")).toBe(false);
        expect(holds(chunks, own.LDAP_BIND_PASSWORD!)).toBe(false);
      }
    } finally {
      await r.close();
    }
  });

  test("frozen, it answers 503 within about the timeout, and logs in again once thawed", async () => {
    const { dir, lines } = directory(ownConfig({ url: own.LDAP_URL, connectTimeout: "500ms", timeout: "500ms" }));
    freezeService(ldap());
    try {
      // SIGSTOP takes effect as each thread next runs: on a loaded machine one may still answer.
      await waitFor(() => stopped(ldap().pid), { what: "every slapd thread stopped" });
      for (const call of [() => dir.authenticate("alice", "alice-ldap-pass"), () => dir.lookup("alice")]) {
        const { ms, result } = await timed(call);
        expect(result).toBeInstanceOf(AppError);
        expect((result as AppError).code).toBe("UNAVAILABLE");
        // The operation timeout (500 ms) answers, inside the whole deadline (1 s); the rest is
        // room for a loaded machine's late timers, far below a hang.
        expect(ms).toBeGreaterThanOrEqual(450);
        expect(ms).toBeLessThan(1_000 + 3_000);
      }
      expect(lines.join("\n")).toMatch(/timed out|timeout/i);
    } finally {
      thawService(ldap());
    }
    expect((await dir.authenticate("alice", "alice-ldap-pass"))?.name).toBe("alice");
  }, 30_000);

  test("killed, it answers 503 at once (before any timeout), and logs in again once restarted", async () => {
    const { dir } = directory(ownConfig({ url: own.LDAP_URL, connectTimeout: "10s", timeout: "10s" }));
    expect((await dir.authenticate("bob", "bob-ldap-pass"))?.name).toBe("bob");
    await killService(ldap());
    try {
      const { ms, result } = await timed(() => dir.authenticate("bob", "bob-ldap-pass"));
      expect((result as AppError).code).toBe("UNAVAILABLE");
      expect(ms).toBeLessThan(3_000);
      expect(await outcome(dir.lookup("bob"))).toBe("UNAVAILABLE");
    } finally {
      await restartService(ldap());
    }
    expect((await dir.authenticate("bob", "bob-ldap-pass"))?.name).toBe("bob");
  }, 30_000);

  test("slow on every step (each under the timeout), the whole login still ends at its deadline", async () => {
    const r = await relay(own.LDAP_URL!, { delayMs: 400 });
    try {
      // Each step takes ~400 ms (< timeout 700 ms); a login has three, past the 900 ms deadline.
      const { dir } = directory(ownConfig({ url: r.url, connectTimeout: "200ms", timeout: "700ms" }));
      const { ms, result } = await timed(() => dir.authenticate("carol", "carol-ldap-pass"));
      expect((result as AppError).code).toBe("UNAVAILABLE");
      expect(ms).toBeGreaterThanOrEqual(850);
      expect(ms).toBeLessThan(900 + 3_000);
      // Nothing is left open once the abandoned steps have ended.
      await waitFor(() => r.open() === 0, { what: "the login's connections closed" });
      // The same relay with room for three slow steps: the login was refused for time alone.
      const { dir: patient } = directory(ownConfig({ url: r.url, connectTimeout: "5s", timeout: "5s" }));
      expect((await patient.authenticate("carol", "carol-ldap-pass"))?.name).toBe("carol");
    } finally {
      await r.close();
    }
  }, 30_000);
});
