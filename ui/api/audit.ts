/** The audit log as the UI reads it; the entry's type is the server's (src/domains/audit/types.ts). */
import type { AuditEntry } from "../../src/domains/audit/types.ts";
import { api } from "../session.ts";

export type { AuditEntry };

export const fetchAudit = (query: URLSearchParams) => api<AuditEntry[]>(`/api/audit?${query}`);
