import { defineRoute, json, RouteGroup } from "../../http/route.ts";
import type { JobStatus } from "../../util/background.ts";
import { healthAnswer as answer } from "./schemas.ts";
import type { ClusterProbe } from "./service.ts";

export const healthApi = {
  health: defineRoute({
    method: "GET",
    path: "/api/health",
    level: "public",
    summary: "Store and cluster connection status",
    tags: ["service"],
    responses: { 200: json(answer), 503: json(answer, "The store is down") },
  }),
};

export function healthRoutes(deps: {
  probe: ClusterProbe;
  storeCheck: () => Promise<void>;
  version: string;
  startedAt: number;
  jobs: () => JobStatus[];
}) {
  const app = new RouteGroup();
  app.handle(healthApi.health, async (c) => {
    let store: { status: "UP" | "DOWN"; error?: string } = { status: "UP" };
    try {
      await deps.storeCheck();
    } catch (e) {
      store = { status: "DOWN", error: (e as Error).message };
    }
    const def = deps.probe.defaultName();
    const clusters = await Promise.all(
      deps.probe.names().map(async (name) => {
        const h = await deps.probe.health(name);
        return {
          name,
          default: name === def,
          status: h.connected ? ("UP" as const) : ("DOWN" as const),
          ...(h.brokers !== undefined ? { brokers: h.brokers } : {}),
          ...(h.latencyMs !== undefined ? { latencyMs: Math.round(h.latencyMs * 10) / 10 } : {}),
          ...(h.error ? { error: h.error } : {}),
        };
      }),
    );
    const allUp = store.status === "UP" && clusters.every((x) => x.status === "UP");
    const status = store.status === "DOWN" ? "DOWN" : allUp ? "UP" : "DEGRADED";
    // Public: a job's error message (which may name topics or groups) stays in the log.
    const jobs = deps
      .jobs()
      .map(({ name, enabled, running, lastRunAt, lastErrorAt }) => ({ name, enabled, running, lastRunAt, lastErrorAt }));
    return c.json(
      { status, version: deps.version, uptimeMs: Date.now() - deps.startedAt, store, clusters, jobs },
      status === "DOWN" ? 503 : 200,
    );
  });
  return app;
}
