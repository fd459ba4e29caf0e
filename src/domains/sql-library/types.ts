/** The SQL library's answers: shared by the routes' schemas and the UI (no imports, so the UI can take them). */

/** One run of a query, as the history lists it. */
export interface HistoryEntry {
  id: number;
  cluster: string;
  text: string;
  /** When it was last run, epoch ms. */
  ranAt: number;
}

export interface SavedQuery {
  name: string;
  text: string;
  createdAt: number;
  updatedAt: number;
}
