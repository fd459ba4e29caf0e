/**
 * A processor runs with its owner's rights, as they are now: when the owner's access changes (its
 * group, its removal), at start-up and at each resume, the owner must still read the source and
 * write the target, or the processor is paused with the reason in its answer and the audit log.
 */
import { describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Attribute, Change, Client } from "ldapts";
import { LDAP_PEOPLE_DN, ldapEnv, ldapGroupDn, ldapUserDn } from "../cluster/cluster.ts";
import { errorOf, type TestRuntime, testRuntime } from "../helpers/runtime.ts";
import { scopedUser, topicGroup } from "../helpers/scoped.ts";
import { openStoreOf, testStoreSection } from "../helpers/store.ts";
import { action, jsonTopic, outputOf, processorFixture, produce, sourceAndTarget, untilState } from "./helpers.ts";

const f = processorFixture();
const kafka = () => f.kafka();

/** Creates a processor as the user of `token` (its owner). */
async function createAs(rt: TestRuntime, token: string, name: string, sql: string): Promise<string> {
  const res = await rt.request("/api/streams", {
    method: "POST",
    token,
    headers: { accept: "text/plain" },
    body: JSON.stringify({ name, sql, runners: 1 }),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`create ${name}: ${res.status} ${text}`);
  return text;
}

async function loupePauses(rt: TestRuntime, id: string) {
  const entries = await rt.audit.list({ type: "PROCESSOR", limit: 1000 });
  return entries.filter((e) => e.userId === "loupe" && e.content.id === id && e.content.action === "PAUSE");
}

describe("the owner's access is checked again", () => {
  test("22.5: a scoped store user's group no longer covering the source pauses its processor with the reason; resuming waits for the access", async () => {
    const { source, target } = await sourceAndTarget(kafka(), "owned", f.made);
    const group = `writers-${source}`;
    const owner = `owner-${source}`.slice(0, 60);
    const token = await scopedUser(f.rt(), owner, [topicGroup(group, [source, target], [], ["write"])]);
    const id = await createAs(f.rt(), token, `owned-${source}`, `INSERT INTO \`${target}\` SELECT STREAM n FROM \`${source}\``);
    await produce(kafka(), source, [{ value: { n: 1 } }]);
    await outputOf(kafka(), target, 1);
    expect(await loupePauses(f.rt(), id)).toEqual([]);

    // The group now covers the target only.
    const changed = await f.rt().request(`/api/groups/${group}`, {
      method: "PUT",
      role: "admin",
      body: JSON.stringify({ topics: { allow: [target], deny: [] } }),
    });
    expect(changed.status).toBe(200);
    const reason = `Paused by Loupe: its owner '${owner}' no longer holds read on '${source}'`;
    const paused = await untilState(f.rt(), id, "PAUSED", 30_000);
    expect(paused.lastActionMsg).toBe(reason);
    expect(paused.deploymentErrorMsg).toBe(reason);
    expect(Object.values(paused.runnerState).map((r) => [r.state, r.errorMsg])).toEqual([["STOPPED", reason]]);
    const audited = await loupePauses(f.rt(), id);
    expect(audited).toHaveLength(1);
    expect(audited[0]!.content).toMatchObject({ owner, reason: `its owner '${owner}' no longer holds read on '${source}'` });

    // Not even an admin resumes it while the owner may not run it.
    const refused = await action(f.rt(), id, "resume", "admin");
    expect(refused.status).toBe(403);
    expect((await errorOf(refused)).message).toBe(
      `Processor 'owned-${source}' cannot run: its owner '${owner}' no longer holds read on '${source}'`,
    );
    expect((await untilState(f.rt(), id, "PAUSED")).deploymentErrorMsg).toBe(reason);

    // Access back: the owner resumes it, and it copies what came meanwhile.
    await produce(kafka(), source, [{ value: { n: 2 } }]);
    const back = await f.rt().request(`/api/groups/${group}`, {
      method: "PUT",
      role: "admin",
      body: JSON.stringify({ topics: { allow: [source, target], deny: [] } }),
    });
    expect(back.status).toBe(200);
    const resumed = await f.rt().request(`/api/streams/${id}/resume`, { method: "PUT", token });
    expect(resumed.status).toBe(200);
    expect((await untilState(f.rt(), id, "RUNNING")).deploymentErrorMsg).toBeUndefined();
    expect((await outputOf(kafka(), target, 2)).map((r) => r.value)).toEqual([{ n: 1 }, { n: 2 }]);

    // Write taken away (the group reads only): the target is the reason now.
    await f.rt().request(`/api/groups/${group}`, { method: "PUT", role: "admin", body: JSON.stringify({ roles: ["read"] }) });
    const again = await untilState(f.rt(), id, "PAUSED", 30_000);
    expect(again.deploymentErrorMsg).toBe(`Paused by Loupe: its owner '${owner}' no longer holds write on '${target}'`);
    await action(f.rt(), id, "delete", "admin");
  }, 90_000);

  test("22.5: deleting the owner pauses its processors", async () => {
    const { source, target } = await sourceAndTarget(kafka(), "orphan", f.made);
    const owner = `gone-${source}`.slice(0, 60);
    const token = await scopedUser(f.rt(), owner, [topicGroup(`g-${source}`, [source, target], [], ["write"])]);
    const id = await createAs(f.rt(), token, `orphan-${source}`, `INSERT INTO \`${target}\` SELECT STREAM n FROM \`${source}\``);
    await untilState(f.rt(), id, "RUNNING");
    expect((await f.rt().request(`/api/users/${owner}`, { method: "DELETE", role: "admin" })).status).toBe(200);
    const paused = await untilState(f.rt(), id, "PAUSED", 30_000);
    expect(paused.deploymentErrorMsg).toBe(`Paused by Loupe: its owner '${owner}' no longer exists`);
    expect(await loupePauses(f.rt(), id)).toHaveLength(1);
    // An admin sees it, and may delete it, not resume it.
    expect((await action(f.rt(), id, "resume", "admin")).status).toBe(403);
    expect((await action(f.rt(), id, "delete", "admin")).status).toBe(200);
  }, 60_000);

  test("22.5: at start-up, a processor whose owner lost access while Loupe was down starts PAUSED with the reason", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "loupe-owner-"));
    // The store both starts open: the file in dataDir, or one PostgreSQL database.
    const store = await testStoreSection(dataDir);
    const made: string[] = [];
    let rt = await testRuntime({ dataDir, ...store.section });
    try {
      const source = await jsonTopic(rt.kafka.default(), "asleep", 1, made);
      const target = await jsonTopic(rt.kafka.default(), "asleep-out", 1, made);
      const owner = `sleeper-${source}`.slice(0, 60);
      const token = await scopedUser(rt, owner, [topicGroup(`g-${source}`, [source, target], [], ["write"])]);
      const id = await createAs(rt, token, `asleep-${source}`, `INSERT INTO \`${target}\` SELECT STREAM n FROM \`${source}\``);
      await untilState(rt, id, "RUNNING");
      await rt.dispose();
      // Changed in the store while no Loupe ran: no access-change event tells anyone.
      const asleep = await openStoreOf(dataDir, store.section);
      await asleep.db.updateTable("users").set({ groups: "[]" }).where("name", "=", owner).execute();
      await asleep.close();
      rt = await testRuntime({ dataDir, ...store.section });
      const paused = await untilState(rt, id, "PAUSED", 30_000);
      expect(paused.deploymentErrorMsg).toBe(`Paused by Loupe: its owner '${owner}' no longer holds read on '${source}'`);
      await action(rt, id, "delete", "admin");
    } finally {
      await rt.dispose({ topics: made });
      await store.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 90_000);

  test("22.5: a directory user's processor pauses when the directory drops it from the group that grants the access", async () => {
    const env = ldapEnv();
    const suffix = randomBytes(4).toString("hex");
    const uid = `proc-owner-${suffix}`;
    const dirGroup = `proc-writers-${suffix}`;
    const admin = new Client({ url: env.url, timeout: 5_000, connectTimeout: 5_000 });
    await admin.bind(env.adminDn, env.adminPassword);
    // A user and a group of this test only: the seeded organisation stays as it is.
    await admin.add(ldapUserDn(uid), { objectClass: "inetOrgPerson", uid, cn: uid, sn: uid, userPassword: "proc-ldap-pass" });
    // groupOfNames needs a member: the directory's admin stays when the owner is dropped.
    await admin.add(ldapGroupDn(dirGroup), { objectClass: "groupOfNames", cn: dirGroup, member: [ldapUserDn(uid), env.adminDn] });
    const made: string[] = [];
    const { source, target } = await sourceAndTarget(kafka(), "dir-owned", made);
    const group = `ldap-writers-${suffix}`;
    const rt = await testRuntime({
      ldap: {
        url: env.url,
        bindDn: env.bindDn,
        bindPassword: env.bindPassword,
        userBase: LDAP_PEOPLE_DN,
        groupMappings: { [dirGroup]: [group] },
        // Owners are checked again at this interval too: what changes in the directory tells Loupe nothing.
        refreshInterval: "1s",
      },
      groups: [{ name: group, roles: ["write"], clusters: ["*"], topics: { allow: [source, target], deny: [] } }],
    });
    try {
      const login = await rt.app.request("/api/login", { method: "POST", body: JSON.stringify({ user: uid, password: "proc-ldap-pass" }) });
      expect(login.status).toBe(200);
      const id = await createAs(rt, await login.text(), `dir-${source}`, `INSERT INTO \`${target}\` SELECT STREAM n FROM \`${source}\``);
      await untilState(rt, id, "RUNNING");
      await admin.modify(
        ldapGroupDn(dirGroup),
        new Change({ operation: "delete", modification: new Attribute({ type: "member", values: [ldapUserDn(uid)] }) }),
      );
      const paused = await untilState(rt, id, "PAUSED", 30_000);
      expect(paused.deploymentErrorMsg).toBe(`Paused by Loupe: its owner '${uid}' no longer holds read on '${source}'`);
      expect(await loupePauses(rt, id)).toHaveLength(1);
      await action(rt, id, "delete", "admin");
    } finally {
      await rt.dispose({ topics: made });
      await admin.del(ldapGroupDn(dirGroup)).catch(() => {});
      await admin.del(ldapUserDn(uid)).catch(() => {});
      await admin.unbind().catch(() => {});
    }
  }, 90_000);
});
