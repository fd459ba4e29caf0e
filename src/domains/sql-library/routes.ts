import { z } from "zod";
import { userOf } from "../../http/context.ts";
import { defineRoute, json, RouteGroup } from "../../http/route.ts";
import { clearAnswer, historyEntry, historyQuery, name, savedAnswer, savedBody, savedQuery } from "./schemas.ts";
import type { SqlLibraryService } from "./service.ts";

const tags = ["sql"];

// Any role that may run queries keeps their own library; nobody reads another user's.
export const sqlLibraryApi = {
  history: defineRoute({
    method: "GET",
    path: "/api/sql/history",
    level: "read",
    summary: "The queries the caller ran through /api/sql/data, newest first (the last 200 are kept)",
    tags,
    request: { query: historyQuery },
    responses: { 200: json(z.array(historyEntry)) },
  }),
  clearHistory: defineRoute({
    method: "DELETE",
    path: "/api/sql/history",
    level: "read",
    summary: "Clear the caller's query history",
    audit: { type: "QUERY_HISTORY", change: "REMOVE" },
    tags,
    responses: { 200: json(clearAnswer, "How many entries were removed") },
  }),
  saved: defineRoute({
    method: "GET",
    path: "/api/sql/saved",
    level: "read",
    summary: "The caller's saved queries, by name",
    tags,
    responses: { 200: json(z.array(savedQuery)) },
  }),
  save: defineRoute({
    method: "PUT",
    path: "/api/sql/saved/{name}",
    level: "read",
    summary: "Save a query under a name, replacing the caller's query of that name if any",
    audit: { type: "SAVED_QUERY", change: "ADD" },
    tags,
    request: { params: z.object({ name }), body: savedBody },
    responses: { 200: json(savedAnswer, "The saved query, and whether it replaced one") },
  }),
  remove: defineRoute({
    method: "DELETE",
    path: "/api/sql/saved/{name}",
    level: "read",
    summary: "Delete one of the caller's saved queries (404 when there is none of that name)",
    audit: { type: "SAVED_QUERY", change: "REMOVE" },
    tags,
    request: { params: z.object({ name }) },
    responses: { 200: json(z.array(savedQuery), "The caller's saved queries after the deletion") },
  }),
};

export function sqlLibraryRoutes(service: SqlLibraryService) {
  const app = new RouteGroup();
  app.handle(sqlLibraryApi.history, async (c) => c.json(await service.history(userOf(c), c.req.valid("query").limit)));
  app.handle(sqlLibraryApi.clearHistory, async (c) => {
    const removed = await service.clearHistory(userOf(c));
    c.set("auditContent", { removed });
    return c.json({ removed });
  });
  app.handle(sqlLibraryApi.saved, async (c) => c.json(await service.saved(userOf(c))));
  app.handle(sqlLibraryApi.save, async (c) => {
    const { name } = c.req.valid("param");
    const { text } = c.req.valid("json");
    const { row, replaced } = await service.save(userOf(c), name, text);
    c.set("auditContent", { name, text, replaced });
    return c.json({ ...row, replaced });
  });
  app.handle(sqlLibraryApi.remove, async (c) => {
    const user = userOf(c);
    const { name } = c.req.valid("param");
    await service.remove(user, name);
    c.set("auditContent", { name });
    return c.json(await service.saved(user));
  });
  return app;
}
