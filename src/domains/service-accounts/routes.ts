import { z } from "zod";
import { AppError } from "../../errors.ts";
import { userOf } from "../../http/context.ts";
import { defineRoute, json, RouteGroup } from "../../http/route.ts";
import type { ServiceAccountService, ServiceAccountView } from "./service.ts";

/** The name is the part of the token before its colon: no colon in it, and safe in a URL path. */
const accountName = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/, "1 to 100 letters, digits, '.', '_' or '-', starting with a letter or digit");
const groupList = z.array(z.string().min(1).max(100)).max(100, "at most 100 groups");
/** Epoch milliseconds, or an ISO 8601 time. */
const expiry = z
  .union([z.number().int().positive(), z.string().datetime({ offset: true, message: "expected epoch milliseconds or an ISO 8601 time" })])
  .transform((v) => (typeof v === "number" ? v : Date.parse(v)));

const params = z.object({ name: accountName.describe("the service account's name") });
const createBody = z.object({ name: accountName, groups: groupList, expiresAt: expiry.nullable().optional() }).strict();
const changeBody = z
  .object({
    name: accountName.optional(),
    groups: groupList.optional(),
    expiresAt: expiry.nullable().optional(),
    disabled: z.boolean().optional(),
  })
  .strict()
  .refine((b) => b.groups !== undefined || b.expiresAt !== undefined || b.disabled !== undefined, {
    message: "name at least one of groups, expiresAt or disabled to change",
  });

const accountView = z.object({
  name: z.string(),
  groups: z.array(z.string()),
  expiresAt: z.number().int().nullable(),
  disabled: z.boolean(),
  createdBy: z.string(),
  createdAt: z.number().int(),
  updatedAt: z.number().int(),
  lastUsedAt: z.number().int().nullable(),
});
const createdView = accountView.extend({
  secret: z.string().describe("shown only in this answer"),
  token: z.string().describe("`name:secret`: send it as x-service-token or Authorization: Bearer"),
});

const tags = ["access"];

export const serviceAccountApi = {
  list: defineRoute({
    method: "GET",
    path: "/api/service-accounts",
    level: "admin",
    summary: "Every service account, by name (never their secrets)",
    tags,
    responses: { 200: json(z.array(accountView)) },
  }),
  create: defineRoute({
    method: "POST",
    path: "/api/service-accounts",
    level: "admin",
    summary: "Create a service account; the answer holds its secret, which is never shown again",
    audit: { type: "USER", change: "ADD" },
    tags,
    request: { body: createBody },
    responses: { 201: json(createdView, "The account, its secret and its token") },
  }),
  get: defineRoute({
    method: "GET",
    path: "/api/service-accounts/{name}",
    level: "admin",
    summary: "One service account",
    tags,
    request: { params },
    responses: { 200: json(accountView) },
  }),
  update: defineRoute({
    method: "PUT",
    path: "/api/service-accounts/{name}",
    level: "admin",
    summary: "Change a service account's groups, expiry or disabled flag",
    audit: { type: "USER", change: "UPDATE" },
    tags,
    request: { params, body: changeBody },
    responses: { 200: json(accountView, "The account after the change") },
  }),
  remove: defineRoute({
    method: "DELETE",
    path: "/api/service-accounts/{name}",
    level: "admin",
    summary: "Delete (revoke) a service account: its token stops working and its streams close",
    audit: { type: "USER", change: "REMOVE" },
    tags,
    request: { params },
    responses: { 200: json(accountView, "The account deleted") },
  }),
};

const described = (a: ServiceAccountView) => ({
  serviceAccount: a.name,
  groups: a.groups,
  expiresAt: a.expiresAt,
  disabled: a.disabled,
});

export function serviceAccountRoutes(accounts: ServiceAccountService) {
  const app = new RouteGroup();
  app.handle(serviceAccountApi.list, async (c) => c.json(await accounts.list()));
  app.handle(serviceAccountApi.create, async (c) => {
    const created = await accounts.create(c.req.valid("json"), userOf(c));
    const { secret: _secret, token: _token, ...rest } = created;
    c.set("auditContent", described(rest));
    return c.json(created, 201);
  });
  app.handle(serviceAccountApi.get, async (c) => c.json(await accounts.get(c.req.valid("param").name)));
  app.handle(serviceAccountApi.update, async (c) => {
    const { name } = c.req.valid("param");
    const { name: named, ...change } = c.req.valid("json");
    if (named !== undefined && named !== name)
      throw new AppError("BAD_REQUEST", `The body names service account '${named}' but the path '${name}': it cannot be renamed`);
    const { account, changed } = await accounts.update(name, change);
    c.set("auditContent", { ...described(account), changed: changed.length ? changed.join(",") : "nothing" });
    return c.json(account);
  });
  app.handle(serviceAccountApi.remove, async (c) => {
    const removed = await accounts.remove(c.req.valid("param").name);
    c.set("auditContent", described(removed));
    return c.json(removed);
  });
  return app;
}
