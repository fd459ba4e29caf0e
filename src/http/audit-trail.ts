/**
 * What the access check writes to the audit log: the vocabulary a route's access rule names
 * (type and change) and the port the check writes through. The audit area's service implements
 * the port (src/domains/audit/service.ts); http knows no more of it than this.
 */

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
  // Beyond the SPEC's list: the Kafka cluster's own users (SCRAM credentials).
  "KAFKA_USER",
  // Beyond the SPEC's list: the audit log's own retention (entries pruned and where they went).
  "AUDIT_LOG",
  // Beyond the SPEC's list: alert settings turned on or off, and their conditions.
  "ALERT_SETTING",
  // Beyond the SPEC's list: alert notifications pruned by their retention.
  "ALERT_NOTIFICATION",
  // Beyond the SPEC's list: dead-letter redrive jobs (created, started, paused, resumed, cancelled, completed).
  "REDRIVE",
] as const;
export type AuditType = (typeof AUDIT_TYPES)[number];

/** The SPEC's changes, and (beyond its list) DENY for an ACCESS entry. */
export type AuditChange = "ADD" | "REMOVE" | "UPDATE" | "INSERT" | "DENY";

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

/** An audited change whose intent is stored; completed with its outcome when the change ends. */
export interface PendingChange {
  complete(result?: AuditResult): Promise<unknown>;
}

/** The audit log as the access check uses it: a denial recorded, an audited change begun. */
export interface AuditTrail {
  /** Records an entry; a failure to store is logged, never thrown. */
  record(rec: AuditRecord): Promise<unknown>;
  /** Stores the intent of a change; throws (UNAVAILABLE) when it cannot, and the change must not be made. */
  begin(rec: Omit<AuditRecord, "failure"> & { request?: Record<string, unknown> }): Promise<PendingChange>;
}
