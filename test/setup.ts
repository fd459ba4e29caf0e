/**
 * Preloaded by `bun test` (bunfig.toml). Under `npm test` (test/run.ts) the services already run
 * and their variables are set, so this starts nothing. A `bun test` of some files on its own
 * starts what is missing here, once, for that run: one Kafka broker, the schema registry (two
 * hosts sharing one store on the broker), an OpenLDAP directory and a Kafka Connect cluster (two
 * workers); see test/cluster/services.ts for the variables that skip or switch off each.
 *
 * The processes are stopped by a global afterAll, killed on SIGINT/SIGTERM/SIGHUP, and a
 * watchdog process kills them if this process dies any other way.
 *
 * No default timeout is set here: under --parallel this file runs again for every test file and
 * setDefaultTimeout would override the command line's --timeout. Run `bun test --timeout 60000`.
 */

import { afterAll } from "bun:test";
import { startTestServices, wantedServices } from "./cluster/services.ts";

const wanted = wantedServices();
if (wanted.length > 0) {
  const services = await startTestServices(wanted, "test/setup");
  Object.assign(process.env, services.env);
  afterAll(() => services.stop());
}
