/** The SQL library's answers: shared by the routes' schemas and the UI (no imports, so the UI can take them). */

/** One run of a query, as the history lists it. */
export interface HistoryEntry {
  id: number;
  cluster: string;
  text: string;
  /** When it was last run, epoch ms. */
  ranAt: number;
  /** Records the run returned, once it ended; null while it runs or when it never started reading. */
  rows: number | null;
  /** Why it ended (END, LIMIT, STOPPED, CLIENT, ERROR...), once it did; INVALID for a query that did not compile. */
  stopReason: string | null;
}

export interface SavedQuery {
  name: string;
  text: string;
  createdAt: number;
  updatedAt: number;
}
