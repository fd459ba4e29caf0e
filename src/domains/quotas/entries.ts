/**
 * Between Kafka's client-quota entities and the SPEC's quota entries, and the SPEC's precedence
 * as the broker applies it. Pure: no Kafka, no HTTP.
 *
 * A Kafka entity names a user, a client id or both; either may be the default (a null name).
 * The SPEC's types: USERCLIENT (user and client id), USERS (user and default client: "all
 * client ids of one user"), USER, USERS DEFAULT (default user), CLIENT, CLIENTS DEFAULT
 * (default client). Two of the SPEC's precedence levels have no route of their own: the default
 * user with a client id, and with the default client. Their paths name the default user
 * `<default>` (`/api/quotas/users/<default>/clients/{client-id}`), as Kafka's tools write it, and
 * they are listed as USERCLIENT and USERS with the user `<default>`. IP quotas are not the SPEC's
 * and are left out.
 */

import type { QuotaEntry as KafkaQuotaEntry, QuotaEntity } from "../../kafka/index.ts";
import {
  type EffectiveQuota,
  type MatchingEntry,
  PRECEDENCE_RULES,
  QUOTA_KEYS,
  type QuotaEntry,
  type QuotaKey,
  type QuotaProperties,
  SHARED_BY,
} from "./schemas.ts";
import { describeTarget, type QuotaTarget, urlOf } from "./targets.ts";

export function kafkaEntity(t: QuotaTarget): QuotaEntity[] {
  const out: QuotaEntity[] = [];
  if (t.user !== undefined) out.push({ type: "user", name: t.user });
  if (t.clientId !== undefined) out.push({ type: "client-id", name: t.clientId });
  return out;
}

/** The target of a Kafka entity, or null for one the SPEC has no type for (IP addresses). */
export function targetOf(entity: QuotaEntity[]): QuotaTarget | null {
  const t: QuotaTarget = {};
  for (const e of entity) {
    if (e.type === "user") t.user = e.name;
    else if (e.type === "client-id") t.clientId = e.name;
    else return null;
  }
  return t.user === undefined && t.clientId === undefined ? null : t;
}

export const sameTarget = (a: QuotaTarget, b: QuotaTarget): boolean => a.user === b.user && a.clientId === b.clientId;

/** Kafka's values (doubles) as the SPEC's strings, the SPEC's constraints only. */
export function propertiesOf(values: Record<string, number>): QuotaProperties {
  const out: QuotaProperties = {};
  for (const k of QUOTA_KEYS) if (values[k] !== undefined) out[k] = String(values[k]);
  return out;
}

export function entryOf(t: QuotaTarget, values: Record<string, number>, isAuthorized: boolean): QuotaEntry {
  return { ...describeTarget(t), properties: propertiesOf(values), url: urlOf(t), isAuthorized };
}

/** Kafka's entries as the SPEC's, in a stable order (by url); IP entries and entries without a SPEC constraint left out. */
export function entriesOf(described: KafkaQuotaEntry[], isAuthorized: boolean): QuotaEntry[] {
  const out: QuotaEntry[] = [];
  for (const d of described) {
    const t = targetOf(d.entity);
    if (!t) continue;
    const entry = entryOf(t, d.values, isAuthorized);
    if (Object.keys(entry.properties).length > 0) out.push(entry);
  }
  return out.sort((a, b) => (a.url < b.url ? -1 : a.url > b.url ? 1 : 0));
}

/**
 * The SPEC's precedence level (1 highest) of an entity for a user and client id, or null when it
 * does not apply to them. This is the order of Kafka's `DefaultQuotaCallback`.
 */
export function precedenceOf(t: QuotaTarget, user: string, clientId: string): number | null {
  const u = t.user === user ? "user" : t.user === null ? "default" : t.user === undefined ? "none" : null;
  const c = t.clientId === clientId ? "client" : t.clientId === null ? "default" : t.clientId === undefined ? "none" : null;
  if (u === null || c === null) return null;
  const table: Record<string, number> = {
    "user client": 1,
    "user default": 2,
    "user none": 3,
    "default client": 4,
    "default default": 5,
    "default none": 6,
    "none client": 7,
    "none default": 8,
  };
  return table[`${u} ${c}`] ?? null;
}

/**
 * Which limit applies to a user and client id, constraint by constraint. The broker keeps one
 * quota manager per constraint (produce, fetch, request), and each knows only the entities that
 * set its constraint: so each constraint comes from the highest entry that sets it, and an entry
 * with only `consumer_byte_rate` does not hide a lower entry's `producer_byte_rate`. The
 * rule also says whose traffic shares the limit: the broker tags its throttle bucket with the
 * user and client id for levels 1, 2, 4 and 5, the user alone for 3 and 6, the client id alone
 * for 7 and 8.
 */
export function effectiveOf(described: KafkaQuotaEntry[], user: string, clientId: string): EffectiveQuota {
  const matching: Array<MatchingEntry & { values: Record<string, number> }> = [];
  for (const d of described) {
    const t = targetOf(d.entity);
    if (!t) continue;
    const precedence = precedenceOf(t, user, clientId);
    if (precedence === null) continue;
    const { isAuthorized: _, ...entry } = entryOf(t, d.values, false);
    if (Object.keys(entry.properties).length === 0) continue;
    matching.push({ ...entry, precedence, rule: PRECEDENCE_RULES[precedence - 1]!, values: d.values });
  }
  matching.sort((a, b) => a.precedence - b.precedence);
  const quotas = QUOTA_KEYS.map((property: QuotaKey) => {
    const from = matching.find((m) => m.properties[property] !== undefined);
    if (!from) return { property, value: null, source: null, sharedBy: null };
    const { values: _, ...source } = from;
    return { property, value: from.properties[property]!, source, sharedBy: sharedBy(from.precedence) };
  });
  return { user, clientId, quotas, matching: matching.map(({ values: _, ...m }) => m) };
}

function sharedBy(precedence: number): (typeof SHARED_BY)[number] {
  if (precedence === 3 || precedence === 6) return SHARED_BY[1];
  if (precedence >= 7) return SHARED_BY[2];
  return SHARED_BY[0];
}
