/** The SQL library's answers, inferred from their schemas. */
export type { HistoryEntry, SavedQuery } from "./schemas.ts";
