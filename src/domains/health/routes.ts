import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../../http/context.ts";
import type { ApiDocs } from "../../http/openapi.ts";
import type { ClusterProbe } from "./service.ts";

const answer = z.object({
  status: z.enum(["UP", "DEGRADED", "DOWN"]),
  version: z.string(),
  uptimeMs: z.number(),
  store: z.object({ status: z.enum(["UP", "DOWN"]), error: z.string().optional() }),
  clusters: z.array(
    z.object({
      name: z.string(),
      default: z.boolean(),
      status: z.enum(["UP", "DOWN"]),
      brokers: z.number().optional(),
      latencyMs: z.number().optional(),
      error: z.string().optional(),
    }),
  ),
});

export function healthRoutes(
  deps: { probe: ClusterProbe; storeCheck: () => Promise<void>; version: string; startedAt: number },
  docs: ApiDocs,
) {
  const app = new Hono<AppEnv>();
  docs.describe({ method: "GET", path: "/api/health", response: answer, tags: ["service"] });
  app.get("/health", async (c) => {
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
    return c.json({ status, version: deps.version, uptimeMs: Date.now() - deps.startedAt, store, clusters }, status === "DOWN" ? 503 : 200);
  });
  return app;
}
