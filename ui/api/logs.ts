/** The service's kept log lines; the line's type is the server's (src/domains/logs/schemas.ts). */
import type { LogLine } from "../../src/domains/logs/schemas.ts";
import { api } from "../session.ts";

export type { LogLine };

export const fetchLogs = (level: "INFO" | "METRICS") => api<LogLine[]>(`/api/logs/${level}`);
