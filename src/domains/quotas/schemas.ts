/**
 * The quotas API's shapes, declared once: the routes validate and document with them, the
 * service answers their types, and the UI imports them (ui/api/quotas.ts). Zod only.
 */
import { z } from "zod";

/** The SPEC's quota constraints; Kafka keeps each as its own quota type (and throttles each apart). */
export const QUOTA_KEYS = ["producer_byte_rate", "consumer_byte_rate", "request_percentage"] as const;
export type QuotaKey = (typeof QUOTA_KEYS)[number];

/** The SPEC's entity types (the Go client's spellings). `CLIENTS` is in the SPEC's list; no Kafka entity maps to it. */
export const QUOTA_ENTITY_TYPES = ["CLIENT", "CLIENTS", "CLIENTS DEFAULT", "USER", "USERS", "USERCLIENT", "USERS DEFAULT"] as const;
export type QuotaEntityType = (typeof QUOTA_ENTITY_TYPES)[number];

/** How a path names Kafka's default entity (`--entity-default`): `/api/quotas/users/<default>/clients/{client-id}`. */
export const DEFAULT_NAME = "<default>";

/** The largest byte rate taken: Kafka keeps a LONG, sent as a double; past 2^53 its digits are not kept exactly. */
export const MAX_BYTE_RATE = Number.MAX_SAFE_INTEGER;

const valueText = (key: QuotaKey) =>
  key === "request_percentage"
    ? "a number greater than 0 (percent of one network and I/O thread's time)"
    : `a whole number of bytes per second from 1 to ${MAX_BYTE_RATE}`;

/**
 * One constraint's value as clients send it: a string holding a number (the SPEC), a JSON
 * number (taken too), and `""` or null for "not given" (the Go client sends all three keys).
 */
const quotaValue = (key: QuotaKey) =>
  z
    .union([z.string().max(32), z.number(), z.null()])
    .optional()
    .transform((v, ctx): number | undefined => {
      if (v === undefined || v === null || (typeof v === "string" && v.trim() === "")) return undefined;
      const n = typeof v === "number" ? v : /^\s*[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?\s*$/.test(v) ? Number(v) : Number.NaN;
      const whole = key !== "request_percentage";
      if (!Number.isFinite(n) || n <= 0 || (whole && (!Number.isInteger(n) || n > MAX_BYTE_RATE))) {
        ctx.addIssue({ code: "custom", message: `${key} must be ${valueText(key)}, not ${JSON.stringify(v)}` });
        return z.NEVER;
      }
      return n;
    });

/**
 * `PUT` body: constraint names to values. Only the constraints given change (the others stay
 * as they are); at least one must have a value.
 */
export const quotaValuesBody = z
  .strictObject(
    {
      producer_byte_rate: quotaValue("producer_byte_rate"),
      consumer_byte_rate: quotaValue("consumer_byte_rate"),
      request_percentage: quotaValue("request_percentage"),
    },
    {
      error: (iss) =>
        iss.code === "unrecognized_keys" ? `unknown quota constraint; the constraints are ${QUOTA_KEYS.join(", ")}` : undefined,
    },
  )
  .refine((b) => QUOTA_KEYS.some((k) => b[k] !== undefined), {
    message: `give a value to at least one of ${QUOTA_KEYS.join(", ")} ("" means not given)`,
  });
export type QuotaValues = z.output<typeof quotaValuesBody>;
export type QuotaValuesBody = z.input<typeof quotaValuesBody>;

/** `DELETE` body: the constraints to remove; empty or absent: all three. */
export const quotaKeysBody = z
  .array(z.enum(QUOTA_KEYS, { error: `the quota constraints are ${QUOTA_KEYS.join(", ")}` }))
  .max(QUOTA_KEYS.length * 4)
  .optional()
  .transform((keys) => (keys && keys.length > 0 ? [...new Set(keys)] : [...QUOTA_KEYS]));

/** Kafka principal names and client ids: any text but none; the default is `<default>`. */
const entityName = (what: string) => z.string().min(1, `${what} must not be empty`).max(255, `${what} has at most 255 characters`);
export const userParams = z.object({ user: entityName("user").describe("a user name, or `<default>` for the default user") });
export const clientParams = z.object({ clientId: entityName("client id").describe("a client id") });
export const userClientParams = z.object({
  user: entityName("user").describe("a user name, or `<default>` for the default user"),
  clientId: entityName("client id").describe("a client id"),
});

/** Constraint names to values, as strings holding numbers (the Go client decodes strings). */
export const quotaProperties = z
  .object({
    producer_byte_rate: z.string().optional(),
    consumer_byte_rate: z.string().optional(),
    request_percentage: z.string().optional(),
  })
  .describe("the constraints set on this entry, as strings holding numbers");
export type QuotaProperties = z.infer<typeof quotaProperties>;

/** One quota entry: a Kafka client-quota entity (user, client id or both; defaults included) and its constraints. */
export const quotaEntry = z.object({
  entityType: z.enum(QUOTA_ENTITY_TYPES),
  entityName: z.string().describe("the user for USER, USERS and USERCLIENT, the client id for CLIENT; `<default>` for a default"),
  child: z.string().optional().describe("USERCLIENT only: the client id (`<default>` for the user's default client)"),
  properties: quotaProperties,
  url: z.string().describe("the entry's own path, where PUT and DELETE change it"),
  isAuthorized: z.boolean().describe("whether the caller may change it (admins)"),
});
export type QuotaEntry = z.infer<typeof quotaEntry>;

export const quotaList = z.array(quotaEntry);

/** The SPEC's precedence, highest first: the number is the rule's place in that list. */
export const PRECEDENCE_RULES = [
  "user and client id",
  "user and default client",
  "user",
  "default user and client id",
  "default user and default client",
  "default user",
  "client id",
  "default client",
] as const;

export const effectiveQuery = z.object({
  user: entityName("user").describe("the Kafka principal's name (`ANONYMOUS` on a listener without authentication)"),
  clientId: entityName("clientId").describe("the client id"),
});

const matchingEntry = quotaEntry.omit({ isAuthorized: true }).extend({
  precedence: z.number().int().min(1).max(8).describe("the entry's place in the SPEC's precedence, 1 highest"),
  rule: z.enum(PRECEDENCE_RULES),
});
export type MatchingEntry = z.infer<typeof matchingEntry>;

/** Who shares one throttle bucket, by the rule that applies (Kafka's quota metric tags). */
export const SHARED_BY = ["this user and client id", "every client id of this user", "every user of this client id"] as const;

export const effectiveQuota = z.object({
  user: z.string(),
  clientId: z.string(),
  quotas: z
    .array(
      z.object({
        property: z.enum(QUOTA_KEYS),
        value: z.string().nullable().describe("the limit that applies; null: none (not throttled for this constraint)"),
        source: matchingEntry.nullable().describe("the entry it comes from"),
        sharedBy: z
          .enum(SHARED_BY)
          .nullable()
          .describe("whose traffic counts against the limit: Kafka keeps one throttle bucket per user, per client id or per pair"),
      }),
    )
    .describe("one per constraint: Kafka resolves each constraint on its own, from the highest entry that sets it"),
  matching: z.array(matchingEntry).describe("every entry that applies to the pair, highest precedence first"),
});
export type EffectiveQuota = z.infer<typeof effectiveQuota>;

/** The answer of a change: the entry as it stands after it (`properties` empty once all are removed). */
export const quotaChanged = quotaEntry;
