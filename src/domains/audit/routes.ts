import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../../http/context.ts";
import type { ApiDocs } from "../../http/openapi.ts";
import { type StreamRegistry, sseResponse, sseStream } from "../../http/sse.ts";
import { queryParams } from "../../http/validate.ts";
import type { AuditService } from "./service.ts";
import { AUDIT_TYPES, type AuditEntry } from "./types.ts";

export const MAX_AUDIT_LIMIT = 10_000;

const time = z.union([z.string().regex(/^\d+$/).transform(Number), z.iso.datetime({ offset: true }).transform((s) => Date.parse(s))]);

export const auditQuery = z
  .object({
    type: z.enum(AUDIT_TYPES).optional(),
    user: z.string().min(1).max(256).optional(),
    from: time.optional(),
    to: time.optional(),
    limit: z.coerce.number().int().min(1).max(MAX_AUDIT_LIMIT).default(1000),
  })
  .strict();

const entry = z.object({
  type: z.string(),
  change: z.string(),
  userId: z.string(),
  timestamp: z.number(),
  content: z.record(z.string(), z.string()),
});

export function auditRoutes(audit: AuditService, streams: StreamRegistry, docs: ApiDocs) {
  const app = new Hono<AppEnv>();
  docs.describe({ method: "GET", path: "/api/audit", query: auditQuery, response: z.array(entry), tags: ["audit"] });
  docs.describe({ method: "GET", path: "/api/sse/audit", responseType: "text/event-stream", tags: ["audit"] });

  app.get("/audit", async (c) => c.json(await audit.list(queryParams(c, auditQuery))));

  app.get("/sse/audit", (c) => {
    const release = streams.acquire(c.get("session")!.user.name, c);
    c.env?.server?.timeout(c.req.raw, 0);
    const stream = sseStream(
      {
        heartbeat: ":",
        heartbeatMs: 5_000,
        maxBufferedBytes: 1 << 20,
        errorLine: () => "data:",
        endLine: "data:",
        requestSignal: c.req.raw.signal,
        onClose: release,
      },
      // Completed entries only: an intent (PENDING) is not streamed, since a line cannot be
      // updated later and a change would show twice.
      (w) =>
        new Promise<void>((resolve) => {
          const unsubscribe = audit.subscribe((e: AuditEntry) => w.send(`data:${JSON.stringify(e)}`));
          w.signal.addEventListener("abort", () => {
            unsubscribe();
            resolve();
          });
        }),
    );
    return sseResponse(stream);
  });
  return app;
}
