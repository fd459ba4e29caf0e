import { z } from "zod";
import { AppError } from "../../errors.ts";
import { userOf } from "../../http/context.ts";
import { defineRoute, json, RouteGroup } from "../../http/route.ts";
import { clientAddress } from "../auth/routes.ts";
import { PASSWORD_MAX, PASSWORD_MIN, type UserService, type UserView } from "./service.ts";

const userName = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$/, "1 to 128 letters, digits, '.', '_', '@' or '-', starting with a letter or digit");
const password = z
  .string()
  .min(PASSWORD_MIN, `a password has at least ${PASSWORD_MIN} characters`)
  .max(PASSWORD_MAX, `a password has at most ${PASSWORD_MAX} characters`);
const groupList = z.array(z.string().min(1).max(100)).max(100, "at most 100 groups");
const email = z.string().email("not an e-mail address").max(320).nullable();

const params = z.object({ name: userName.describe("the user's name") });

const createBody = z.object({ name: userName, password, groups: groupList.default([]), email: email.optional() }).strict();
const changeBody = z
  .object({
    name: userName.optional(),
    groups: groupList.optional(),
    password: password.optional(),
    disabled: z.boolean().optional(),
    email: email.optional(),
  })
  .strict()
  .refine((b) => b.groups !== undefined || b.password !== undefined || b.disabled !== undefined || b.email !== undefined, {
    message: "name at least one of groups, password, disabled or email to change",
  });
const ownPasswordBody = z.object({ currentPassword: z.string().max(PASSWORD_MAX), password }).strict();

const userView = z.object({
  name: z.string(),
  email: z.string().nullable(),
  groups: z.array(z.string()),
  roles: z.array(z.string()).describe("the user's own roles, on every cluster and topic (config file users); groups add theirs"),
  source: z.enum(["config", "store"]).describe("config: defined in the configuration file, read-only here"),
  disabled: z.boolean(),
  createdAt: z.number().int().nullable(),
  updatedAt: z.number().int().nullable(),
});

const tags = ["access"];

export const userApi = {
  list: defineRoute({
    method: "GET",
    path: "/api/users",
    level: "admin",
    summary: "Every local user, from the configuration file and the store, by name",
    tags,
    responses: { 200: json(z.array(userView)) },
  }),
  create: defineRoute({
    method: "POST",
    path: "/api/users",
    level: "admin",
    summary: "Create a local user with a password and groups (409 when the name exists)",
    audit: { type: "USER", change: "ADD" },
    tags,
    request: { body: createBody },
    responses: { 201: json(userView, "The user created") },
  }),
  get: defineRoute({
    method: "GET",
    path: "/api/users/{name}",
    level: "admin",
    summary: "One local user",
    tags,
    request: { params },
    responses: { 200: json(userView) },
  }),
  update: defineRoute({
    method: "PUT",
    path: "/api/users/{name}",
    level: "admin",
    summary: "Change a user's groups, password, e-mail or disabled flag (409 for a user of the configuration file)",
    audit: { type: "USER", change: "UPDATE" },
    tags,
    request: { params, body: changeBody },
    responses: { 200: json(userView, "The user after the change") },
  }),
  remove: defineRoute({
    method: "DELETE",
    path: "/api/users/{name}",
    level: "admin",
    summary: "Delete a user and end its sessions (409 for a user of the configuration file)",
    audit: { type: "USER", change: "REMOVE" },
    tags,
    request: { params },
    responses: { 200: json(userView, "The user deleted") },
  }),
  ownPassword: defineRoute({
    method: "PUT",
    path: "/api/user/password",
    level: "session",
    summary:
      "Change your own password, given the current one (local users of the store): a wrong one counts as a failed login (429 when throttled); every other session of yours ends",
    audit: { type: "USER", change: "UPDATE" },
    tags,
    request: { body: ownPasswordBody },
    responses: { 200: json(z.object({ success: z.boolean() })) },
  }),
};

const described = (u: UserView) => ({ name: u.name, groups: u.groups, disabled: u.disabled, email: u.email });

export function userRoutes(users: UserService) {
  const app = new RouteGroup();
  app.handle(userApi.list, async (c) => c.json(await users.list()));
  app.handle(userApi.create, async (c) => {
    const created = await users.create(c.req.valid("json"));
    c.set("auditContent", described(created));
    return c.json(created, 201);
  });
  app.handle(userApi.get, async (c) => c.json(await users.get(c.req.valid("param").name)));
  app.handle(userApi.update, async (c) => {
    const { name } = c.req.valid("param");
    const { name: named, ...change } = c.req.valid("json");
    if (named !== undefined && named !== name)
      throw new AppError("BAD_REQUEST", `The body names user '${named}' but the path '${name}': a user cannot be renamed`);
    const { user, changed } = await users.update(name, change, userOf(c));
    c.set("auditContent", { name, changed: changed.length ? changed.join(",") : "nothing", groups: user.groups, disabled: user.disabled });
    return c.json(user);
  });
  app.handle(userApi.remove, async (c) => {
    const removed = await users.remove(c.req.valid("param").name, userOf(c));
    c.set("auditContent", described(removed));
    return c.json(removed);
  });
  app.handle(userApi.ownPassword, async (c) => {
    const session = c.get("session")!;
    if (session.user.kind !== "local")
      throw new AppError("CONFLICT", `A ${session.user.kind === "ldap" ? "directory" : "service account"} identity has no password here`);
    const { currentPassword, password: next } = c.req.valid("json");
    await users.changeOwnPassword(session.user.name, currentPassword, next, { address: clientAddress(c), session: session.tokenHash });
    c.set("auditContent", { name: session.user.name, changed: "password" });
    return c.json({ success: true });
  });
  return app;
}
