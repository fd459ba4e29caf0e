import { z } from "zod";
import { defineRoute, eventStream, json, RouteGroup } from "../../http/route.ts";
import { type StreamRegistry, sseResponse, sseStream } from "../../http/sse.ts";
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

export const auditApi = {
  list: defineRoute({
    method: "GET",
    path: "/api/audit",
    level: "admin",
    summary: "Audit entries, newest first",
    tags: ["audit"],
    request: { query: auditQuery },
    responses: { 200: json(z.array(entry)) },
  }),
  stream: defineRoute({
    method: "GET",
    path: "/api/sse/audit",
    level: "admin",
    summary: "Live audit entries (event stream)",
    tags: ["audit"],
    responses: { 200: eventStream("`data:<entry JSON>` lines, `:` heartbeats") },
  }),
};

export function auditRoutes(audit: AuditService, streams: StreamRegistry) {
  const app = new RouteGroup();

  app.handle(auditApi.list, async (c) => c.json(await audit.list(c.req.valid("query"))));

  app.handle(auditApi.stream, (c) => {
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
