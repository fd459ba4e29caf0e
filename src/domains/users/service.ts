import type { Db } from "../../db/index.ts";
import { AppError } from "../../errors.ts";
import type { GroupService } from "../access/group-service.ts";
import { deletePersonalRecords, nameTakenError, storeHolder } from "../auth/names.ts";
import { type AuthService, hashPassword } from "../auth/service.ts";
import type { NewUser, UserChange, UserView } from "./schemas.ts";

const readOnly = (name: string) =>
  new AppError(
    "CONFLICT",
    `User '${name}' is defined in the configuration file, which the API cannot change: edit the file (and reload) instead`,
  );

type Row = {
  name: string;
  email: string | null;
  roles: string;
  groups: string;
  disabled: number;
  created_at: number;
  updated_at: number | null;
};

const view = (r: Row): UserView => ({
  name: r.name,
  email: r.email,
  groups: JSON.parse(r.groups),
  roles: JSON.parse(r.roles),
  source: "store",
  disabled: r.disabled === 1,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

/**
 * Local users (BASIC): the config file's, read-only here, and the store's, managed through the
 * API. Every change ends the tokens it should (a deleted or disabled user's) and tells the
 * auth service, so live tokens and open streams follow it at once.
 */
export class UserService {
  constructor(
    private readonly db: Db,
    private readonly auth: AuthService,
    private readonly groups: GroupService,
    private readonly now: () => number = Date.now,
  ) {}

  async list(): Promise<UserView[]> {
    const out = new Map<string, UserView>();
    const rows = await this.db.selectFrom("users").selectAll().execute();
    for (const r of rows) if (!this.auth.isConfigUser(r.name)) out.set(r.name, view(r));
    for (const u of this.auth.configUserList())
      out.set(u.name, { ...u, source: "config", disabled: false, createdAt: null, updatedAt: null });
    return [...out.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  async get(name: string): Promise<UserView> {
    const u = (await this.list()).find((x) => x.name === name);
    if (!u) throw new AppError("NOT_FOUND", `No user named '${name}'`);
    return u;
  }

  async create(u: NewUser): Promise<UserView> {
    if (this.auth.isConfigUser(u.name)) throw new AppError("CONFLICT", `User '${u.name}' exists: it is defined in the configuration file`);
    const taken = await this.auth.nameTaken(u.name);
    if (taken) throw nameTakenError(u.name, taken, "store");
    await this.groups.requireExisting(u.groups);
    const hash = await hashPassword(u.password);
    const at = this.now();
    const created = await this.db.transaction().execute(async (trx) => {
      // Again in the transaction that inserts: a user or service account made meanwhile is seen.
      const holder = await storeHolder(trx, u.name);
      if (holder) return holder;
      await trx
        .insertInto("users")
        .values({
          name: u.name,
          password_hash: hash,
          roles: "[]",
          groups: JSON.stringify([...new Set(u.groups)]),
          email: u.email ?? null,
          disabled: 0,
          created_at: at,
          updated_at: at,
        })
        .execute();
      return undefined;
    });
    if (created) throw nameTakenError(u.name, created, "store");
    this.auth.accessChanged("user changed");
    return this.get(u.name);
  }

  /** The user after the change and the names of the fields that changed (never the password's value). */
  async update(name: string, change: UserChange, actor: string): Promise<{ user: UserView; changed: string[] }> {
    if (this.auth.isConfigUser(name)) throw readOnly(name);
    if (change.disabled === true && name === actor) throw new AppError("CONFLICT", "You cannot disable yourself");
    if (change.groups) await this.groups.requireExisting(change.groups);
    const hash = change.password !== undefined ? await hashPassword(change.password) : undefined;
    const at = this.now();
    const changed = await this.db.transaction().execute(async (trx) => {
      const row = await trx.selectFrom("users").selectAll().where("name", "=", name).executeTakeFirst();
      if (!row) return undefined;
      const set: Record<string, unknown> = {};
      const fields: string[] = [];
      if (change.groups && JSON.stringify(change.groups) !== row.groups) {
        set.groups = JSON.stringify([...new Set(change.groups)]);
        fields.push("groups");
      }
      if (change.disabled !== undefined && (change.disabled ? 1 : 0) !== row.disabled) {
        set.disabled = change.disabled ? 1 : 0;
        fields.push("disabled");
      }
      if (change.email !== undefined && change.email !== row.email) {
        set.email = change.email;
        fields.push("email");
      }
      if (hash) {
        set.password_hash = hash;
        fields.push("password");
      }
      if (fields.length)
        await trx
          .updateTable("users")
          .set({ ...set, updated_at: at })
          .where("name", "=", name)
          .execute();
      return fields;
    });
    if (!changed) throw new AppError("NOT_FOUND", `No user named '${name}'`);
    // A new password or a disabled account ends the sessions made with the old state.
    if (changed.includes("password") || change.disabled === true) await this.auth.revokeUser(name);
    if (changed.length) this.auth.accessChanged("user changed");
    return { user: await this.get(name), changed };
  }

  async remove(name: string, actor: string): Promise<UserView> {
    if (this.auth.isConfigUser(name)) throw readOnly(name);
    if (name === actor) throw new AppError("CONFLICT", "You cannot delete yourself");
    const before = await this.get(name);
    const res = await this.db.deleteFrom("users").where("name", "=", name).executeTakeFirst();
    if (Number(res.numDeletedRows) === 0) throw new AppError("NOT_FOUND", `No user named '${name}'`);
    // Whoever holds the name next (a directory user, a new user) must not find this one's records.
    await deletePersonalRecords(this.db, name);
    await this.auth.revokeUser(name);
    this.auth.accessChanged("user removed");
    return before;
  }

  /**
   * A signed-in local user's own password, given the current one. The check of the current
   * password is a login's: throttled per account and address (429 with Retry-After), so a
   * stolen token cannot guess it faster than a login could. The new password ends every other
   * session of the user (their open streams too); `session`, the one that changed it, stays.
   */
  async changeOwnPassword(name: string, current: string, next: string, from: { address: string; session: string }): Promise<void> {
    if (this.auth.isConfigUser(name)) throw readOnly(name);
    const row = await this.db.selectFrom("users").select(["password_hash", "disabled"]).where("name", "=", name).executeTakeFirst();
    if (!row) throw new AppError("CONFLICT", "Only local users have a password here: change a directory password in the directory");
    const ok = await this.auth.checkPassword(name, from.address, () => Bun.password.verify(current, row.password_hash).catch(() => false));
    if (!ok) throw new AppError("BAD_REQUEST", "The current password is wrong");
    await this.db
      .updateTable("users")
      .set({ password_hash: await hashPassword(next), updated_at: this.now() })
      .where("name", "=", name)
      .execute();
    await this.auth.revokeUser(name, from.session);
    this.auth.accessChanged("user changed");
  }
}
