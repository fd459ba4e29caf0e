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
 * `bun test --parallel` on its own would start them in every worker and stop them after each
 * worker's first file: run test/run.ts, which starts them once for all workers. No default
 * timeout is set here (in a worker it would override the command line's --timeout): run
 * `bun test --timeout 60000`.
 */

import { afterAll } from "bun:test";
import { startTestServices, wantedServices } from "./cluster/services.ts";

const wanted = wantedServices();
if (wanted.length > 0) {
  if (process.env.BUN_TEST_WORKER_ID !== undefined) {
    throw new Error(
      `test/setup.ts: no ${wanted.join(", ")} for this parallel worker; run \`bun test/run.ts\` (it starts them once) or set their variables`,
    );
  }
  const services = await startTestServices(wanted, "test/setup");
  Object.assign(process.env, services.env);
  afterAll(() => services.stop());
}
