/** The audit log's types: declared once, used by the access table, the service and the routes. */

export type AuditType =
  | "TOPIC"
  | "TOPIC_DATA"
  | "QUOTAS"
  | "BROKER_CONFIG"
  | "ACL"
  | "SCHEMA"
  | "PROCESSOR"
  | "CONNECTOR"
  // Beyond the SPEC's list: stored key/value types of a topic, and consumer group changes.
  | "TOPIC_METADATA"
  | "CONSUMER_GROUP";
export type AuditChange = "ADD" | "REMOVE" | "UPDATE" | "INSERT";

/** The SPEC's audit entry. */
export interface AuditEntry {
  type: AuditType;
  change: AuditChange;
  userId: string;
  timestamp: number;
  content: Record<string, string>;
}

export interface AuditRecord {
  type: AuditType;
  change: AuditChange;
  user: string;
  /** What was acted on; values are turned into strings, secrets removed. */
  content?: Record<string, unknown>;
  /** A failure carries its reason into `content.reason` and `content.outcome = FAILURE`. */
  failure?: string;
}
