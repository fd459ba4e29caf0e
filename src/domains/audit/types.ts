/** The audit log's types: declared once, used by the access table, the service, the routes and the UI (imports only zod). */
import { z } from "zod";

export const AUDIT_TYPES = [
  "TOPIC",
  "TOPIC_DATA",
  "QUOTAS",
  "BROKER_CONFIG",
  "ACL",
  "SCHEMA",
  "PROCESSOR",
  "CONNECTOR",
  // Beyond the SPEC's list: stored key/value types of a topic, and consumer group changes.
  "TOPIC_METADATA",
  "CONSUMER_GROUP",
  // Beyond the SPEC's list: a user's saved SQL queries and the clearing of their query history.
  "SAVED_QUERY",
  "QUERY_HISTORY",
  // Beyond the SPEC's list: a request refused by the role check on a route that changes nothing.
  "ACCESS",
  // Beyond the SPEC's list: identities and their access (users, groups, service accounts).
  "USER",
] as const;
export type AuditType = (typeof AUDIT_TYPES)[number];

/** The SPEC's changes, and (beyond its list) DENY for an ACCESS entry. */
export const AUDIT_CHANGES = ["ADD", "REMOVE", "UPDATE", "INSERT", "DENY"] as const;
export type AuditChange = (typeof AUDIT_CHANGES)[number];

/**
 * Where an audited change stands, kept in `content.outcome` (a string: clients decode content
 * as a map of strings). PENDING: the intent is stored and the change under way. UNKNOWN: Loupe
 * stopped before the result was stored, so whether the change happened is not known.
 */
export type AuditOutcome = "PENDING" | "SUCCESS" | "FAILURE" | "UNKNOWN";

/** The SPEC's audit entry. */
export const auditEntry = z.object({
  type: z.enum(AUDIT_TYPES),
  change: z.enum(AUDIT_CHANGES),
  userId: z.string(),
  timestamp: z.number(),
  content: z.record(z.string(), z.string()),
});
export type AuditEntry = z.output<typeof auditEntry>;

export interface AuditRecord {
  type: AuditType;
  change: AuditChange;
  user: string;
  /** What was acted on; values are turned into strings, secrets removed. */
  content?: Record<string, unknown>;
  /** A failure carries its reason into `content.reason` and `content.outcome = FAILURE`. */
  failure?: string;
}

/** How an audited change ended: what completes its pending entry. */
export interface AuditResult {
  /** What the change acted on, as its handler understood it: replaces the intent's raw request. */
  content?: Record<string, unknown>;
  failure?: string;
}
