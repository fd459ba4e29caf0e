import { createHash, randomBytes } from "node:crypto";
import type { Db } from "../../db/index.ts";
import { AppError } from "../../errors.ts";
import type { GroupService } from "../access/group-service.ts";
import { deletePersonalRecords, nameTakenError, storeHolder } from "../auth/names.ts";
import type { AuthService } from "../auth/service.ts";
import type { CreatedServiceAccount, ServiceAccountChange, ServiceAccountView } from "./schemas.ts";

type Row = {
  name: string;
  groups: string;
  expires_at: number | null;
  disabled: number;
  created_by: string;
  created_at: number;
  updated_at: number;
  last_used_at: number | null;
};

/**
 * Machine identities: made by an admin with groups, authenticated by `name:secret` (see
 * AuthService). The secret is 256 random bits, shown once at creation and stored only as its
 * SHA-256 (a slow hash adds nothing to a secret that cannot be guessed, and would cost every
 * request). Disabling, deleting or changing one applies at the next request of its token, and
 * its open streams close.
 */
export class ServiceAccountService {
  constructor(
    private readonly db: Db,
    private readonly auth: AuthService,
    private readonly groups: GroupService,
    private readonly now: () => number = Date.now,
  ) {}

  private view(r: Row): ServiceAccountView {
    const pending = this.auth.accountLastUse(r.name);
    return {
      name: r.name,
      groups: JSON.parse(r.groups),
      expiresAt: r.expires_at,
      disabled: r.disabled === 1,
      createdBy: r.created_by,
      createdAt: r.created_at,
      updatedAt: r.updated_at,
      lastUsedAt: Math.max(pending ?? 0, r.last_used_at ?? 0) || null,
    };
  }

  async list(): Promise<ServiceAccountView[]> {
    const rows = await this.db.selectFrom("service_accounts").selectAll().orderBy("name").execute();
    return rows.map((r) => this.view(r));
  }

  async get(name: string): Promise<ServiceAccountView> {
    const row = await this.db.selectFrom("service_accounts").selectAll().where("name", "=", name).executeTakeFirst();
    if (!row) throw new AppError("NOT_FOUND", `No service account named '${name}'`);
    return this.view(row);
  }

  private checkExpiry(expiresAt: number | null | undefined): void {
    if (expiresAt != null && expiresAt <= this.now()) throw new AppError("BAD_REQUEST", "expiresAt is in the past");
  }

  /** The account and its secret, which is never shown again. */
  async create(
    a: { name: string; groups: string[]; expiresAt?: number | null | undefined },
    createdBy: string,
  ): Promise<CreatedServiceAccount> {
    // One name, one identity (see auth/names.ts): a user's name, in any case, is no account's.
    const taken = await this.auth.nameTaken(a.name);
    if (taken) throw nameTakenError(a.name, taken, "service");
    await this.groups.requireExisting(a.groups);
    this.checkExpiry(a.expiresAt);
    const secret = randomBytes(32).toString("base64url");
    const at = this.now();
    const created = await this.db.transaction().execute(async (trx) => {
      const holder = await storeHolder(trx, a.name);
      if (holder) return holder;
      await trx
        .insertInto("service_accounts")
        .values({
          name: a.name,
          secret_hash: createHash("sha256").update(secret).digest("hex"),
          groups: JSON.stringify([...new Set(a.groups)]),
          expires_at: a.expiresAt ?? null,
          disabled: 0,
          created_by: createdBy,
          created_at: at,
          updated_at: at,
          last_used_at: null,
        })
        .execute();
      return undefined;
    });
    if (created) throw nameTakenError(a.name, created, "service");
    this.auth.accessChanged("service account changed");
    return { ...(await this.get(a.name)), secret, token: `${a.name}:${secret}` };
  }

  async update(name: string, change: ServiceAccountChange): Promise<{ account: ServiceAccountView; changed: string[] }> {
    if (change.groups) await this.groups.requireExisting(change.groups);
    this.checkExpiry(change.expiresAt);
    const changed = await this.db.transaction().execute(async (trx) => {
      const row = await trx.selectFrom("service_accounts").selectAll().where("name", "=", name).executeTakeFirst();
      if (!row) return undefined;
      const set: Record<string, unknown> = {};
      if (change.groups && JSON.stringify(change.groups) !== row.groups) set.groups = JSON.stringify([...new Set(change.groups)]);
      if (change.expiresAt !== undefined && change.expiresAt !== row.expires_at) set.expires_at = change.expiresAt;
      if (change.disabled !== undefined && (change.disabled ? 1 : 0) !== row.disabled) set.disabled = change.disabled ? 1 : 0;
      const fields = Object.keys(set).map((k) => (k === "expires_at" ? "expiresAt" : k));
      if (fields.length)
        await trx
          .updateTable("service_accounts")
          .set({ ...set, updated_at: this.now() })
          .where("name", "=", name)
          .execute();
      return fields;
    });
    if (!changed) throw new AppError("NOT_FOUND", `No service account named '${name}'`);
    if (changed.length) this.auth.accessChanged("service account changed");
    return { account: await this.get(name), changed };
  }

  async remove(name: string): Promise<ServiceAccountView> {
    const before = await this.get(name);
    const res = await this.db.deleteFrom("service_accounts").where("name", "=", name).executeTakeFirst();
    if (Number(res.numDeletedRows) === 0) throw new AppError("NOT_FOUND", `No service account named '${name}'`);
    // Whoever holds the name next must not find this account's records.
    await deletePersonalRecords(this.db, name);
    this.auth.accessChanged("service account removed");
    return before;
  }
}
