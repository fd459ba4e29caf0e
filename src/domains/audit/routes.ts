import { z } from "zod";
import { defineRoute, eventStream, json, RouteGroup } from "../../http/route.ts";
import { feedResponse, type StreamRegistry } from "../../http/sse.ts";
import type { AuditService } from "./service.ts";
import { AUDIT_TYPES, type AuditEntry, auditEntry } from "./types.ts";

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

export const auditApi = {
  list: defineRoute({
    method: "GET",
    path: "/api/audit",
    level: "admin",
    summary: "Audit entries, newest first",
    tags: ["audit"],
    request: { query: auditQuery },
    responses: { 200: json(z.array(auditEntry)) },
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

  // Completed entries only: an intent (PENDING) is not streamed, since a line cannot be updated
  // later and a change would show twice.
  app.handle(auditApi.stream, (c) => feedResponse(c, streams, (send: (e: AuditEntry) => void) => audit.subscribe(send), 5_000));
  return app;
}
