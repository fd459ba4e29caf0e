/** The caller's SQL library: history and saved queries; types from src/domains/sql-library/schemas.ts. */
import type { ClearAnswer, HistoryEntry, SavedAnswer, SavedQuery } from "../../src/domains/sql-library/schemas.ts";
import { api } from "../session.ts";

export type { HistoryEntry, SavedQuery };

const savedPath = (name: string) => `/api/sql/saved/${encodeURIComponent(name)}`;

export const fetchHistory = () => api<HistoryEntry[]>("/api/sql/history?limit=200");
export const clearHistory = () => api<ClearAnswer>("/api/sql/history", { method: "DELETE" });
export const fetchSaved = () => api<SavedQuery[]>("/api/sql/saved");
export const saveQuery = (name: string, text: string) =>
  api<SavedAnswer>(savedPath(name), { method: "PUT", body: JSON.stringify({ text }) });
export const deleteSaved = (name: string) => api<SavedQuery[]>(savedPath(name), { method: "DELETE" });
