/**
 * The directory test/setup.ts starts (or LDAP_URL points at): real slapd, spoken to with
 * ldapts as Loupe will. It shows what the login code may rely on: search-then-bind works with
 * the service account, memberOf follows group changes, and anonymous sees no one.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Attribute, Change, Client, InvalidCredentialsError, NoSuchObjectError } from "ldapts";
import {
  freezeService,
  isAlive,
  killService,
  LDAP_GROUPS,
  LDAP_PEOPLE_DN,
  LDAP_USERS,
  ldapEnv,
  ldapGroupDn,
  ldapService,
  ldapUserDn,
  restartService,
  startCluster,
  thawService,
} from "./cluster.ts";

const env = ldapEnv();
const clients: Client[] = [];

function client(): Client {
  const c = new Client({ url: env.url, timeout: 5_000, connectTimeout: 5_000 });
  clients.push(c);
  return c;
}

async function boundAs(dn: string, password: string): Promise<Client> {
  const c = client();
  await c.bind(dn, password);
  return c;
}

/** The DNs of the groups the entry of `uid` is a member of, as the service account reads them. */
async function memberOf(uid: string): Promise<string[]> {
  const svc = await boundAs(env.bindDn, env.bindPassword);
  const { searchEntries } = await svc.search(LDAP_PEOPLE_DN, { filter: `(uid=${uid})`, attributes: ["memberOf"] });
  expect(searchEntries).toHaveLength(1);
  const value = searchEntries[0]!.memberOf ?? [];
  return (Array.isArray(value) ? value : [value]).map(String).sort();
}

/** A user of this test only, so the seeded organisation stays as the README describes it. */
async function tempUser(admin: Client): Promise<{ uid: string; dn: string }> {
  const uid = `temp-${randomBytes(4).toString("hex")}`;
  const dn = ldapUserDn(uid);
  await admin.add(dn, { objectClass: "inetOrgPerson", uid, cn: uid, sn: uid, userPassword: "temp-ldap-pass" });
  return { uid, dn };
}

afterAll(async () => {
  await Promise.all(clients.map((c) => c.unbind().catch(() => {})));
});

describe("the test directory (slapd)", () => {
  test("the service account finds a user by uid, with name and mail but no password", async () => {
    const svc = await boundAs(env.bindDn, env.bindPassword);
    const { searchEntries } = await svc.search(env.baseDn, {
      scope: "sub",
      filter: "(uid=bob)",
      attributes: ["cn", "mail", "userPassword"],
    });
    expect(searchEntries).toHaveLength(1);
    const [bob] = searchEntries;
    expect(bob!.dn).toBe(ldapUserDn("bob"));
    expect(bob!.cn).toBe("Bob Baker");
    expect(bob!.mail).toBe("bob@loupe.test");
    // Asked for, but not readable: ldapts answers an attribute it did not receive as [].
    expect(bob!.userPassword ?? []).toEqual([]);
  });

  test.each(LDAP_USERS.map((u) => [u.uid, u.password]))("%s binds with their password", async (uid, password) => {
    const c = await boundAs(ldapUserDn(uid), password);
    expect(await c.exop("1.3.6.1.4.1.4203.1.11.3")).toMatchObject({ value: `dn:${ldapUserDn(uid)}` });
  });

  test.each([
    ["a wrong password", ldapUserDn("alice"), "bob-ldap-pass"],
    ["an unknown user", ldapUserDn("nobody"), "alice-ldap-pass"],
    ["the service account with a user's password", env.bindDn, "alice-ldap-pass"],
  ])("%s does not bind", async (_what, dn, password) => {
    const c = client();
    await expect(c.bind(dn, password)).rejects.toBeInstanceOf(InvalidCredentialsError);
  });

  // What the login must guard against itself: with an empty password the directory answers
  // success, as an unauthenticated bind (RFC 4513 5.1.2), whatever the DN.
  test("an empty password binds as anonymous, not as the user", async () => {
    const c = await boundAs(ldapUserDn("alice"), "");
    // "Who am I?" (RFC 4532) answers an empty authzId for anonymous.
    expect((await c.exop("1.3.6.1.4.1.4203.1.11.3")).value ?? "").toBe("");
    const { searchEntries } = await c.search(LDAP_PEOPLE_DN, { filter: "(uid=alice)" }).catch((err: unknown) => {
      if (err instanceof NoSuchObjectError) return { searchEntries: [] };
      throw err;
    });
    expect(searchEntries).toEqual([]);
  });

  test("an anonymous search sees no users", async () => {
    const c = client();
    for (const base of [env.baseDn, LDAP_PEOPLE_DN]) {
      const found = await c.search(base, { scope: "sub", filter: "(objectClass=*)" }).then(
        (r) => r.searchEntries,
        (err: unknown) => {
          if (err instanceof NoSuchObjectError) return [];
          throw err;
        },
      );
      expect(found).toEqual([]);
    }
  });

  test.each(LDAP_USERS.map((u) => [u.uid, u.groups]))("%s carries memberOf of their groups %p", async (uid, groups) => {
    expect(await memberOf(uid)).toEqual(groups.map(ldapGroupDn).sort());
  });

  test("every seeded group exists as a groupOfNames with its members", async () => {
    const svc = await boundAs(env.bindDn, env.bindPassword);
    for (const g of LDAP_GROUPS) {
      const { searchEntries } = await svc.search(ldapGroupDn(g), { scope: "base", attributes: ["objectClass", "member"] });
      const members = [searchEntries[0]!.member ?? []].flat().map(String).sort();
      expect(members).toEqual(
        LDAP_USERS.filter((u) => u.groups.includes(g))
          .map((u) => ldapUserDn(u.uid))
          .sort(),
      );
    }
  });

  test("a change of a group's members shows in memberOf at once, both ways", async () => {
    const admin = await boundAs(env.adminDn, env.adminPassword);
    const anchor = await tempUser(admin);
    const user = await tempUser(admin);
    const group = ldapGroupDn(`temp-${randomBytes(4).toString("hex")}`);
    await admin.add(group, { objectClass: "groupOfNames", cn: group.slice(3, group.indexOf(",")), member: anchor.dn });
    try {
      expect(await memberOf(user.uid)).toEqual([]);
      await admin.modify(group, new Change({ operation: "add", modification: new Attribute({ type: "member", values: [user.dn] }) }));
      expect(await memberOf(user.uid)).toEqual([group]);
      await admin.modify(group, new Change({ operation: "delete", modification: new Attribute({ type: "member", values: [user.dn] }) }));
      expect(await memberOf(user.uid)).toEqual([]);
      expect(await memberOf(anchor.uid)).toEqual([group]);
    } finally {
      await admin.del(group);
      await admin.del(user.dn);
      await admin.del(anchor.dn);
    }
  });

  test("a deleted user leaves its groups (referential integrity)", async () => {
    const admin = await boundAs(env.adminDn, env.adminPassword);
    const stays = await tempUser(admin);
    const goes = await tempUser(admin);
    const group = ldapGroupDn(`temp-${randomBytes(4).toString("hex")}`);
    await admin.add(group, { objectClass: "groupOfNames", cn: group.slice(3, group.indexOf(",")), member: [stays.dn, goes.dn] });
    try {
      await admin.del(goes.dn);
      const { searchEntries } = await admin.search(group, { scope: "base", attributes: ["member"] });
      expect([searchEntries[0]!.member].flat()).toEqual([stays.dn]);
    } finally {
      await admin.del(group);
      await admin.del(stays.dn);
    }
  });

  test("a directory of its own starts seeded, answers, and leaves no process or data when stopped", async () => {
    const cluster = await startCluster({ services: ["ldap"], ownerPid: process.pid });
    const [ldap] = cluster.services;
    expect(ldap!.env.LDAP_URL).toMatch(/^ldap:\/\/127\.0\.0\.1:\d+$/);
    expect(await ldapService.probe(ldap!)).toBe(true);
    await cluster.stop({ graceMs: 2_000 });
    expect(isAlive(ldap!.pid)).toBe(false);
    expect(isAlive(ldap!.watchdogPid!)).toBe(false);
    expect(existsSync(ldap!.runDir)).toBe(false);
  });
});

/** A test CA and a server certificate for 127.0.0.1 signed by it, made with openssl. */
function testCa(dir: string): { caFile: string; certFile: string; keyFile: string } {
  const f = (name: string) => join(dir, name);
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  writeFileSync(f("san.ext"), "subjectAltName=IP:127.0.0.1\n");
  for (const args of [
    ["req", "-x509", ...ec, "-keyout", f("ca.key"), "-out", f("ca.pem"), "-days", "2", "-subj", "/CN=Loupe test CA"],
    ["req", ...ec, "-keyout", f("server.key"), "-out", f("server.csr"), "-subj", "/CN=127.0.0.1"],
    ["x509", "-req", "-in", f("server.csr"), "-CA", f("ca.pem"), "-CAkey", f("ca.key"), "-CAcreateserial", "-days", "2"].concat([
      "-extfile",
      f("san.ext"),
      "-out",
      f("server.pem"),
    ]),
  ]) {
    const res = spawnSync("openssl", args, { encoding: "utf8" });
    if (res.status !== 0) throw new Error(`openssl ${args[0]} failed: ${res.stderr}`);
  }
  return { caFile: f("ca.pem"), certFile: f("server.pem"), keyFile: f("server.key") };
}

describe("a directory of a test's own", () => {
  test("with a certificate it serves ldaps and StartTLS to clients that trust the CA, and no others", async () => {
    const dir = mkdtempSync(join(tmpdir(), "loupe-ldap-ca-"));
    try {
      const { caFile, certFile, keyFile } = testCa(dir);
      const cluster = await startCluster({ services: ["ldap"], ownerPid: process.pid, ldapTls: { certFile, keyFile } });
      const own: Client[] = [];
      try {
        const { LDAP_URL, LDAPS_URL, LDAP_BIND_DN, LDAP_BIND_PASSWORD } = cluster.env;
        expect(LDAPS_URL).toMatch(/^ldaps:\/\/127\.0\.0\.1:\d+$/);
        const tlsOptions = { ca: [readFileSync(caFile)] };
        const overLdaps = new Client({ url: LDAPS_URL!, tlsOptions, timeout: 5_000, connectTimeout: 5_000 });
        own.push(overLdaps);
        await overLdaps.bind(LDAP_BIND_DN!, LDAP_BIND_PASSWORD!);
        const overStartTls = new Client({ url: LDAP_URL!, timeout: 5_000, connectTimeout: 5_000 });
        own.push(overStartTls);
        await overStartTls.startTLS(tlsOptions);
        await overStartTls.bind(LDAP_BIND_DN!, LDAP_BIND_PASSWORD!);
        const untrusting = new Client({ url: LDAPS_URL!, timeout: 5_000, connectTimeout: 5_000 });
        own.push(untrusting);
        await expect(untrusting.bind(LDAP_BIND_DN!, LDAP_BIND_PASSWORD!)).rejects.toThrow(/certificate/i);
      } finally {
        await Promise.all(own.map((c) => c.unbind().catch(() => {})));
        await cluster.stop({ graceMs: 2_000 });
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("killed, it restarts on the same port with its data (a directory that was down comes back)", async () => {
    const cluster = await startCluster({ services: ["ldap"], ownerPid: process.pid });
    const own: Client[] = [];
    try {
      const [ldap] = cluster.services;
      const url = ldap!.env.LDAP_URL!;
      const before = new Client({ url, timeout: 5_000, connectTimeout: 5_000 });
      await before.bind(ldap!.env.LDAP_ADMIN_DN!, ldap!.env.LDAP_ADMIN_PASSWORD!);
      await before.add(ldapUserDn("frank"), { objectClass: "inetOrgPerson", uid: "frank", cn: "Frank", sn: "F" });
      await before.unbind();
      await killService(ldap!);
      expect(await ldapService.probe(ldap!).catch(() => false)).toBe(false);
      await restartService(ldap!);
      expect(await ldapService.probe(ldap!)).toBe(true);
      const after = new Client({ url, timeout: 5_000, connectTimeout: 5_000 });
      own.push(after);
      await after.bind(ldap!.env.LDAP_BIND_DN!, ldap!.env.LDAP_BIND_PASSWORD!);
      const { searchEntries } = await after.search(LDAP_PEOPLE_DN, { filter: "(uid=frank)", attributes: ["cn"] });
      expect(searchEntries.map((e) => e.cn)).toEqual(["Frank"]);
    } finally {
      await Promise.all(own.map((c) => c.unbind().catch(() => {})));
      await cluster.stop({ graceMs: 2_000 });
    }
  });

  test("frozen, it accepts connections but answers nothing until thawed (a slow directory)", async () => {
    const cluster = await startCluster({ services: ["ldap"], ownerPid: process.pid });
    const [ldap] = cluster.services;
    const env = ldap!.env;
    try {
      freezeService(ldap!);
      const frozen = new Client({ url: env.LDAP_URL!, timeout: 300, connectTimeout: 300 });
      const t0 = performance.now();
      await expect(frozen.bind(env.LDAP_BIND_DN!, env.LDAP_BIND_PASSWORD!)).rejects.toThrow(/timeout|timed out/i);
      expect(performance.now() - t0).toBeLessThan(3_000);
      thawService(ldap!);
      expect(await ldapService.probe(ldap!)).toBe(true);
    } finally {
      thawService(ldap!);
      await cluster.stop({ graceMs: 2_000 });
    }
  });
});
