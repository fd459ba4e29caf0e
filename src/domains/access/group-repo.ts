import type { Db } from "../../db/index.ts";
import type { Group } from "./scope.ts";

/** A group as the store holds it, with its times. */
export interface StoredGroup extends Group {
  createdAt: number;
  updatedAt: number;
}

type Row = {
  name: string;
  roles: string;
  clusters: string;
  topics_allow: string;
  topics_deny: string;
  created_at: number;
  updated_at: number;
};

function fromRow(r: Row): StoredGroup {
  return {
    name: r.name,
    roles: JSON.parse(r.roles),
    clusters: JSON.parse(r.clusters),
    topics: { allow: JSON.parse(r.topics_allow), deny: JSON.parse(r.topics_deny) },
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

const columns = (g: Group) => ({
  roles: JSON.stringify(g.roles),
  clusters: JSON.stringify(g.clusters),
  topics_allow: JSON.stringify(g.topics.allow),
  topics_deny: JSON.stringify(g.topics.deny ?? []),
});

/** The groups made through the API. */
export class GroupRepo {
  constructor(private readonly db: Db) {}

  async list(): Promise<StoredGroup[]> {
    return (await this.db.selectFrom("groups").selectAll().orderBy("name").execute()).map(fromRow);
  }

  async get(name: string): Promise<StoredGroup | undefined> {
    const row = await this.db.selectFrom("groups").selectAll().where("name", "=", name).executeTakeFirst();
    return row ? fromRow(row) : undefined;
  }

  /**
   * Null when a group of that name exists already. One statement that inserts unless the name is
   * taken, so of two creations at once only one succeeds, on SQLite as on PostgreSQL (where a
   * check and an insert in one transaction could both pass).
   */
  async insert(g: Group, at: number): Promise<StoredGroup | null> {
    const res = await this.db
      .insertInto("groups")
      .values({ name: g.name, ...columns(g), created_at: at, updated_at: at })
      .onConflict((oc) => oc.column("name").doNothing())
      .executeTakeFirst();
    if (Number(res.numInsertedOrUpdatedRows ?? 0) === 0) return null;
    return { ...g, topics: { allow: g.topics.allow, deny: g.topics.deny ?? [] }, createdAt: at, updatedAt: at };
  }

  /** The group before and after, or null when there is none of that name. */
  async update(
    name: string,
    change: (before: StoredGroup) => Group,
    at: number,
  ): Promise<{ before: StoredGroup; after: StoredGroup } | null> {
    return this.db.transaction().execute(async (trx) => {
      const row = await trx.selectFrom("groups").selectAll().where("name", "=", name).executeTakeFirst();
      if (!row) return null;
      const before = fromRow(row);
      const next = change(before);
      await trx
        .updateTable("groups")
        .set({ ...columns(next), updated_at: at })
        .where("name", "=", name)
        .execute();
      return { before, after: { ...next, name, createdAt: before.createdAt, updatedAt: at } };
    });
  }

  /** The group removed, or undefined when there was none of that name. */
  async remove(name: string): Promise<StoredGroup | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const row = await trx.selectFrom("groups").selectAll().where("name", "=", name).executeTakeFirst();
      if (!row) return undefined;
      await trx.deleteFrom("groups").where("name", "=", name).execute();
      return fromRow(row);
    });
  }
}
