/**
 * The directory test/setup.ts starts (or LDAP_URL points at): real slapd, spoken to with
 * ldapts as Loupe will. It shows what the login code may rely on: search-then-bind works with
 * the service account, memberOf follows group changes, and anonymous sees no one.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { Attribute, Change, Client, InvalidCredentialsError, NoSuchObjectError } from "ldapts";
import {
  isAlive,
  LDAP_GROUPS,
  LDAP_PEOPLE_DN,
  LDAP_USERS,
  ldapEnv,
  ldapGroupDn,
  ldapService,
  ldapUserDn,
  startCluster,
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
