import { z } from "zod";
import { groupSchema } from "../../config/schema.ts";
import { groupName } from "../../config/values.ts";
import { AppError } from "../../errors.ts";
import { defineRoute, json, RouteGroup } from "../../http/route.ts";
import type { GroupService, GroupView } from "./group-service.ts";

const params = z.object({ name: groupName.describe("the group's name") });

/** A change names the fields it changes; `name` may be repeated but not changed (a rename is a new group). */
const changeBody = groupSchema
  .omit({ name: true })
  .partial()
  .extend({ name: groupName.optional() })
  .strict()
  .refine((b) => b.roles !== undefined || b.clusters !== undefined || b.topics !== undefined, {
    message: "name at least one of roles, clusters or topics to change",
  });

const groupView = z.object({
  name: z.string(),
  roles: z.array(z.string()),
  clusters: z.array(z.string()),
  topics: z.object({ allow: z.array(z.string()), deny: z.array(z.string()) }),
  source: z.enum(["config", "store"]).describe("config: defined in the configuration file, read-only here"),
  createdAt: z.number().int().nullable(),
  updatedAt: z.number().int().nullable(),
});

const tags = ["access"];

export const groupApi = {
  list: defineRoute({
    method: "GET",
    path: "/api/groups",
    level: "admin",
    summary: "Every group, from the configuration file and the store, by name",
    tags,
    responses: { 200: json(z.array(groupView)) },
  }),
  create: defineRoute({
    method: "POST",
    path: "/api/groups",
    level: "admin",
    summary: "Create a group (409 when the name exists, in the store or the configuration file)",
    audit: { type: "USER", change: "ADD" },
    tags,
    request: { body: groupSchema },
    responses: { 201: json(groupView, "The group created") },
  }),
  get: defineRoute({
    method: "GET",
    path: "/api/groups/{name}",
    level: "admin",
    summary: "One group",
    tags,
    request: { params },
    responses: { 200: json(groupView) },
  }),
  update: defineRoute({
    method: "PUT",
    path: "/api/groups/{name}",
    level: "admin",
    summary: "Change a group's roles, clusters or topics (fields left out are kept; 409 for a group of the configuration file)",
    audit: { type: "USER", change: "UPDATE" },
    tags,
    request: { params, body: changeBody },
    responses: { 200: json(groupView, "The group after the change") },
  }),
  remove: defineRoute({
    method: "DELETE",
    path: "/api/groups/{name}",
    level: "admin",
    summary: "Delete a group (409 for a group of the configuration file)",
    audit: { type: "USER", change: "REMOVE" },
    tags,
    request: { params },
    responses: { 200: json(groupView, "The group deleted") },
  }),
};

/** What an audit entry says of a whole group. */
const described = (g: GroupView) => ({
  group: g.name,
  roles: g.roles,
  clusters: g.clusters,
  allow: g.topics.allow,
  deny: g.topics.deny,
});

export function groupRoutes(groups: GroupService) {
  const app = new RouteGroup();
  app.handle(groupApi.list, async (c) => c.json(await groups.list()));
  app.handle(groupApi.create, async (c) => {
    const created = await groups.create(c.req.valid("json"));
    c.set("auditContent", described(created));
    return c.json(created, 201);
  });
  app.handle(groupApi.get, async (c) => c.json(await groups.get(c.req.valid("param").name)));
  app.handle(groupApi.update, async (c) => {
    const { name } = c.req.valid("param");
    const { name: named, ...change } = c.req.valid("json");
    if (named !== undefined && named !== name)
      throw new AppError("BAD_REQUEST", `The body names group '${named}' but the path '${name}': a group cannot be renamed`);
    const { group, changed, before, after } = await groups.update(name, change);
    c.set("auditContent", { group: name, changed: changed.length ? changed.join(",") : "nothing", before, after });
    return c.json(group);
  });
  app.handle(groupApi.remove, async (c) => {
    const removed = await groups.remove(c.req.valid("param").name);
    c.set("auditContent", described(removed));
    return c.json(removed);
  });
  return app;
}
