/**
 * The audit log's types: declared once, used by the access table, the service and the routes.
 * What a route's access rule names and the access check writes (the types, the changes, a record
 * and its result) is declared with that check, in src/http/audit-trail.ts; the stored entries and
 * their outcomes are the audit area's.
 */
import { z } from "zod";
import { AUDIT_TYPES, type AuditChange } from "../../http/audit-trail.ts";

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

/** The SPEC's changes, and (beyond its list) DENY for an ACCESS entry: AuditChange as a list. */
const AUDIT_CHANGES = ["ADD", "REMOVE", "UPDATE", "INSERT", "DENY"] as const satisfies readonly AuditChange[];
/** Every change is in the list (a change added to AuditChange and not here fails to compile). */
const _everyChange: readonly (typeof AUDIT_CHANGES)[number][] = [] as AuditChange[];

/** The SPEC's audit entry. */
export const auditEntry = z.object({
  type: z.enum(AUDIT_TYPES),
  change: z.enum(AUDIT_CHANGES),
  userId: z.string(),
  timestamp: z.number(),
  content: z.record(z.string(), z.string()),
});
export type AuditEntry = z.output<typeof auditEntry>;
