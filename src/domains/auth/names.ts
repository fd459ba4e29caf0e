import { sql } from "kysely";
import type { Db } from "../../db/index.ts";
import { AppError } from "../../errors.ts";

/**
 * Identity names and who holds them.
 *
 * Everything a user keeps (saved queries, query history, favourites, processors, audit entries,
 * the per-user caps) is filed under the name alone, so one name must stand for one identity
 * whatever its source. Names are compared without case (and, as a directory compares them,
 * with surrounding and repeated spaces ignored, and compatibility forms folded: `Ｃarol` is
 * `carol`): `Carol` and `carol` are the same name. Where two sources hold it, the first of
 * config file > store users > service accounts > directory owns it; the API refuses to make a
 * second holder (409), and a directory user whose name is taken is refused at login (401).
 * The login throttle counts an account by the same key, so no spelling gets its own budget.
 */
export const nameKey = (name: string): string => name.normalize("NFKC").trim().replace(/\s+/g, " ").toLowerCase();

export type NameSource = "config" | "store" | "service" | "ldap";

/** An identity holding a name: where it comes from and its name as spelled there. */
export interface NameHolder {
  source: NameSource;
  name: string;
}

const SOURCE_LABEL: Record<NameSource, string> = {
  config: "user of the configuration file",
  store: "local user",
  service: "service account",
  ldap: "directory user",
};

/** `the local user 'carol'`: for messages and log lines. */
export const describeHolder = (h: NameHolder): string => `the ${SOURCE_LABEL[h.source]} '${h.name}'`;

/** What the API makes of each source, as the start of a sentence. */
const MADE_LABEL: Record<"store" | "service", string> = { store: "User", service: "Service account" };

/**
 * 409 for a name another identity holds, when a `made` (a local user, a service account) of that
 * name was asked for: one name, one identity, whatever the case. Said shortly when the holder is
 * of the kind asked for, spelled the same (a config file's user is a user).
 */
export function nameTakenError(name: string, holder: NameHolder, made: "store" | "service"): AppError {
  const what = MADE_LABEL[made];
  if (holder.name === name && holder.source === made) return new AppError("CONFLICT", `${what} '${name}' exists`);
  if (holder.name === name && holder.source === "config" && made === "store")
    return new AppError("CONFLICT", `${what} '${name}' exists: it is defined in the configuration file`);
  return new AppError(
    "CONFLICT",
    `The name '${name}' is taken: ${describeHolder(holder)} holds it (a name, compared without case, names one identity across the configuration file, local users, service accounts and the directory)`,
  );
}

/**
 * The store user, else the service account, whose name is `name` up to case (ASCII case: store
 * names are ASCII, and a key with other letters in it matches none). Pass the transaction that
 * writes, so the check and the insert are one step.
 */
export async function storeHolder(db: Db, name: string): Promise<NameHolder | undefined> {
  const key = nameKey(name);
  const user = await db.selectFrom("users").select("name").where(sql<string>`lower(name)`, "=", key).orderBy("name").executeTakeFirst();
  if (user) return { source: "store", name: user.name };
  const account = await db
    .selectFrom("service_accounts")
    .select("name")
    .where(sql<string>`lower(name)`, "=", key)
    .orderBy("name")
    .executeTakeFirst();
  return account && { source: "service", name: account.name };
}

/**
 * Deletes what the store keeps under a name for its identity (favourites, query history, saved
 * queries): done when a store user or service account is deleted, so whoever holds the name
 * next (a directory user, a new account) starts with nothing of it.
 */
export async function deletePersonalRecords(db: Db, name: string): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx.deleteFrom("user_profile").where("user_name", "=", name).execute();
    await trx.deleteFrom("sql_history").where("user_name", "=", name).execute();
    await trx.deleteFrom("sql_saved").where("user_name", "=", name).execute();
  });
}
