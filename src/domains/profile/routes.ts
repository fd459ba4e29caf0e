import { z } from "zod";
import { userOf } from "../../http/context.ts";
import { defineRoute, json, RouteGroup } from "../../http/route.ts";
import type { ProfileService } from "./service.ts";

/** Free-form names, as clients invent them (`topics`, `newProperty`), within a sane size. */
const property = z
  .string()
  .regex(/^[A-Za-z][A-Za-z0-9_.-]{0,63}$/, "a letter, then letters, digits, '_', '.' or '-', at most 64 in all")
  .describe("topics, schemas, transformers, or any other name");
const value = z
  .string()
  .min(1)
  .max(255)
  .regex(/^[^\u0000-\u001f\u007f]*$/, "no control characters")
  .describe("a topic, schema or transformer name (URL-encoded)");
const params = z.object({ property, value });

const profile = z
  .object({ topics: z.array(z.string()), schemas: z.array(z.string()), transformers: z.array(z.string()) })
  .catchall(z.array(z.string()));

const tags = ["user profile"];

export const profileApi = {
  get: defineRoute({
    method: "GET",
    path: "/api/user/profile",
    level: "nodata",
    summary: "The caller's favourites: topics, schemas, transformers and any other property",
    tags,
    responses: { 200: json(profile) },
  }),
  add: defineRoute({
    method: "PUT",
    path: "/api/user/profile/{property}/{value}",
    level: "nodata",
    summary: "Add a value to one of the caller's favourites (no body; repeating it changes nothing)",
    tags,
    request: { params },
    responses: { 200: json(profile, "The profile after the change") },
  }),
  remove: defineRoute({
    method: "DELETE",
    path: "/api/user/profile/{property}/{value}",
    level: "nodata",
    summary: "Remove a value from one of the caller's favourites (no body; a missing value is no error)",
    tags,
    request: { params },
    responses: { 200: json(profile, "The profile after the change") },
  }),
};

export function profileRoutes(service: ProfileService) {
  const app = new RouteGroup();
  app.handle(profileApi.get, async (c) => c.json(await service.get(userOf(c))));
  app.handle(profileApi.add, async (c) => {
    const p = c.req.valid("param");
    return c.json(await service.add(userOf(c), p.property, p.value));
  });
  app.handle(profileApi.remove, async (c) => {
    const p = c.req.valid("param");
    return c.json(await service.remove(userOf(c), p.property, p.value));
  });
  return app;
}
