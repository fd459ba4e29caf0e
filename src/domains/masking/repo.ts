import { randomBytes } from "node:crypto";
import type { Db } from "../../db/index.ts";
import type { Database } from "../../db/types.ts";
import type { NewPolicy, PolicyView } from "./schemas.ts";

type Row = Database["masking_policies"];

function fromRow(r: Row): PolicyView {
  return {
    name: r.name,
    topics: JSON.parse(r.topics),
    fields: JSON.parse(r.fields),
    method: r.method as PolicyView["method"],
    replacement: r.replacement,
    keepLast: r.keep_last === null ? null : Number(r.keep_last),
    groups: JSON.parse(r.groups),
    roles: JSON.parse(r.roles),
    exceptGroups: JSON.parse(r.except_groups),
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
  };
}

const columns = (p: NewPolicy) => ({
  topics: JSON.stringify(p.topics),
  fields: JSON.stringify(p.fields),
  method: p.method,
  replacement: p.method === "REDACT" ? (p.replacement ?? null) : null,
  keep_last: p.method === "KEEP_LAST_N" ? (p.keepLast ?? null) : null,
  groups: JSON.stringify(p.groups),
  roles: JSON.stringify(p.roles),
  except_groups: JSON.stringify(p.exceptGroups),
});

/** The masking policies and the install's salt, in the store. */
export class MaskingRepo {
  constructor(private readonly db: Db) {}

  async list(): Promise<PolicyView[]> {
    return (await this.db.selectFrom("masking_policies").selectAll().orderBy("name").execute()).map(fromRow);
  }

  async get(name: string): Promise<PolicyView | undefined> {
    const row = await this.db.selectFrom("masking_policies").selectAll().where("name", "=", name).executeTakeFirst();
    return row ? fromRow(row) : undefined;
  }

  /** Null when a policy of that name exists already (one statement: of two creations at once, one wins). */
  async insert(p: NewPolicy, at: number): Promise<PolicyView | null> {
    const res = await this.db
      .insertInto("masking_policies")
      .values({ name: p.name, ...columns(p), created_at: at, updated_at: at })
      .onConflict((oc) => oc.column("name").doNothing())
      .executeTakeFirst();
    if (Number(res.numInsertedOrUpdatedRows ?? 0) === 0) return null;
    return (await this.get(p.name)) ?? null;
  }

  /** The policy before and after, or null when there is none of that name; `change` may throw to refuse. */
  async update(
    name: string,
    change: (before: PolicyView) => NewPolicy,
    at: number,
  ): Promise<{ before: PolicyView; after: PolicyView } | null> {
    return this.db.transaction().execute(async (trx) => {
      const row = await trx.selectFrom("masking_policies").selectAll().where("name", "=", name).executeTakeFirst();
      if (!row) return null;
      const before = fromRow(row);
      const next = change(before);
      await trx
        .updateTable("masking_policies")
        .set({ ...columns(next), updated_at: at })
        .where("name", "=", name)
        .execute();
      const after = await trx.selectFrom("masking_policies").selectAll().where("name", "=", name).executeTakeFirstOrThrow();
      return { before, after: fromRow(after) };
    });
  }

  async remove(name: string): Promise<PolicyView | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const row = await trx.selectFrom("masking_policies").selectAll().where("name", "=", name).executeTakeFirst();
      if (!row) return undefined;
      await trx.deleteFrom("masking_policies").where("name", "=", name).execute();
      return fromRow(row);
    });
  }

  /** The install's HASH salt, made at the first call (the first of two instances to insert it wins; both read the same). */
  async salt(): Promise<string> {
    await this.db
      .insertInto("masking_salt")
      .values({ id: 1, salt: randomBytes(32).toString("hex") })
      .onConflict((oc) => oc.column("id").doNothing())
      .execute();
    const row = await this.db.selectFrom("masking_salt").select("salt").where("id", "=", 1).executeTakeFirstOrThrow();
    return row.salt;
  }
}
