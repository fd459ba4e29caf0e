import type { StoreConfig } from "../config/schema.ts";
import { openStore, type Store } from "./index.ts";

/**
 * The store the configuration names: PostgreSQL when `store.url` is set, else SQLite in `dataDir`.
 * The PostgreSQL client loads only for a PostgreSQL store.
 */
export async function openConfiguredStore(config: { dataDir: string; store: StoreConfig }): Promise<Store> {
  if (!config.store.url) return openStore(config.dataDir);
  const { openPostgresStore } = await import("./postgres.ts");
  return openPostgresStore({ url: config.store.url, passwordFile: config.store.passwordFile, poolSize: config.store.poolSize });
}
