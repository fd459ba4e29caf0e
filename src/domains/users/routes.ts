import { AppError } from "../../errors.ts";
import { userOf } from "../../http/context.ts";
import { changedFields, crudApi, crudRoutes } from "../../http/crud.ts";
import { defineRoute, json } from "../../http/route.ts";
import { clientAddress } from "../auth/routes.ts";
import { changeUserBody, createUserBody, ownPasswordBody, passwordAnswer, type UserView, userName, userView } from "./schemas.ts";
import type { UserService } from "./service.ts";

export const userApi = {
  ...crudApi({
    path: "/api/users",
    noun: "user",
    tags: ["access"],
    name: userName,
    view: userView,
    createBody: createUserBody,
    changeBody: changeUserBody,
    summaries: {
      list: "Every local user, from the configuration file and the store, by name",
      create: "Create a local user with a password and groups (409 when the name exists)",
      get: "One local user",
      update: "Change a user's groups, password, e-mail or disabled flag (409 for a user of the configuration file)",
      remove: "Delete a user and end its sessions (409 for a user of the configuration file)",
    },
    answers: { created: "The user created", updated: "The user after the change", removed: "The user deleted" },
  }),
  ownPassword: defineRoute({
    method: "PUT",
    path: "/api/user/password",
    level: "session",
    summary:
      "Change your own password, given the current one (local users of the store): a wrong one counts as a failed login (429 when throttled); every other session of yours ends",
    audit: { type: "USER", change: "UPDATE" },
    tags: ["access"],
    request: { body: ownPasswordBody },
    responses: { 200: json(passwordAnswer) },
  }),
};

const described = (u: UserView) => ({ name: u.name, groups: u.groups, disabled: u.disabled, email: u.email });

export function userRoutes(users: UserService) {
  const app = crudRoutes(userApi, "user", {
    described,
    list: () => users.list(),
    get: (name) => users.get(name),
    create: (body) => users.create(body),
    update: async (name, change, c) => {
      const { user, changed } = await users.update(name, change, userOf(c));
      return { view: user, audit: { name, changed: changedFields(changed), groups: user.groups, disabled: user.disabled } };
    },
    remove: (name, c) => users.remove(name, userOf(c)),
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
