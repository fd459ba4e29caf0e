import { Database as Sqlite } from "bun:sqlite";

export interface StoreInspection {
  /** SQLite's `PRAGMA quick_check` answer: "ok" when the file is sound. */
  integrity: string;
  /** The highest schema version applied; 0 for a store that holds none. */
  version: number;
}

/** Reads a store file without changing it (read-only, no migration): its soundness and its schema version. */
export function inspectStore(path: string): StoreInspection {
  const db = new Sqlite(path, { readonly: true });
  try {
    db.exec("PRAGMA busy_timeout = 5000");
    const integrity = db.query<{ quick_check: string }, []>("PRAGMA quick_check").get()?.quick_check ?? "no answer";
    if (integrity !== "ok") return { integrity, version: 0 };
    const version = db.query<{ v: number | null }, []>("SELECT max(version) AS v FROM schema_version").get()?.v ?? 0;
    return { integrity, version };
  } finally {
    db.close();
  }
}
