/**
 * The audit log's types: declared once, used by the access table, the service and the routes.
 * What a route's access rule names and the access check writes (the types, the changes, a record
 * and its result) is declared with that check, in src/http/audit-trail.ts; the stored entries and
 * their outcomes are the audit area's.
 */
import type { AuditChange, AuditType } from "../../http/audit-trail.ts";

export {
  AUDIT_TYPES,
  type AuditChange,
  type AuditRecord,
  type AuditResult,
  type AuditType,
} from "../../http/audit-trail.ts";

/**
 * Where an audited change stands, kept in `content.outcome` (a string: clients decode content
 * as a map of strings). PENDING: the intent is stored and the change under way. UNKNOWN: Loupe
 * stopped before the result was stored, so whether the change happened is not known.
 */
export type AuditOutcome = "PENDING" | "SUCCESS" | "FAILURE" | "UNKNOWN";

/** The SPEC's audit entry. */
export interface AuditEntry {
  type: AuditType;
  change: AuditChange;
  userId: string;
  timestamp: number;
  content: Record<string, string>;
}
