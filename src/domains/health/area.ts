import type { Store } from "../../db/index.ts";
import { defineArea } from "../../http/area.ts";
import type { JobStatus } from "../../util/background.ts";
import { VERSION } from "../../version.ts";
import { healthApi, healthRoutes } from "./routes.ts";
import type { ClusterProbe } from "./service.ts";

export const healthArea = defineArea({
  name: "health",
  routes: healthApi,
  build: (d: { clusters: ClusterProbe; store: Store; startedAt: number; background?: { status(): JobStatus[] } }) =>
    healthRoutes({
      probe: d.clusters,
      storeCheck: () => d.store.ping(),
      version: VERSION,
      startedAt: d.startedAt,
      jobs: () => d.background?.status() ?? [],
    }),
});
