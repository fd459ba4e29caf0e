import type { Kysely } from "kysely";
import * as m0001 from "./0001-initial.ts";
import * as m0002 from "./0002-topics.ts";
import * as m0003 from "./0003-audit-outcome.ts";
import * as m0004 from "./0004-user-profiles.ts";
import * as m0005 from "./0005-sql-library.ts";
import * as m0006 from "./0006-groups.ts";
import * as m0007 from "./0007-identity.ts";
import * as m0008 from "./0008-processors.ts";
import * as m0009 from "./0009-processor-guards.ts";
import * as m0010 from "./0010-leases.ts";
import * as m0011 from "./0011-alerts.ts";
import * as m0012 from "./0012-lag-history.ts";
import * as m0016 from "./0016-masking.ts";
import * as m0017 from "./0017-instance-events.ts";

export interface Migration {
  version: number;
  name: string;
  up(db: Kysely<any>): Promise<void>;
}

/**
 * Every migration, imported statically so that the compiled binary carries them.
 * Append only: a released migration is never edited. Versions may leave a gap (one taken by
 * work not merged yet): the runner applies every version the store lacks, not only those above
 * its highest.
 */
export const MIGRATIONS: Migration[] = [
  { version: 1, ...m0001 },
  { version: 2, ...m0002 },
  { version: 3, ...m0003 },
  { version: 4, ...m0004 },
  { version: 5, ...m0005 },
  { version: 6, ...m0006 },
  { version: 7, ...m0007 },
  { version: 8, ...m0008 },
  { version: 9, ...m0009 },
  { version: 10, ...m0010 },
  { version: 11, ...m0011 },
  { version: 12, ...m0012 },
  { version: 16, ...m0016 },
  { version: 17, ...m0017 },
];
