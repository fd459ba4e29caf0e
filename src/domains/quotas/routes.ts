import type { Context } from "hono";
import { levelAllows } from "../../http/access.ts";
import type { AppEnv } from "../../http/context.ts";
import { clusterOf } from "../../http/context.ts";
import { type AnyRoute, defineRoute, json, RouteGroup } from "../../http/route.ts";
import {
  clientParams,
  effectiveQuery,
  effectiveQuota,
  type QuotaKey,
  type QuotaValues,
  quotaChanged,
  quotaKeysBody,
  quotaList,
  quotaValuesBody,
  userClientParams,
  userParams,
} from "./schemas.ts";
import type { QuotaChange, QuotaService } from "./service.ts";
import { describeTarget, nameOf, type QuotaTarget } from "./targets.ts";

const tags = ["quotas"];

/** The PUT and DELETE of one of the SPEC's quota paths, declared alike. */
function changeRoutes<P extends typeof userParams | typeof clientParams | typeof userClientParams | undefined>(
  path: string,
  scope: string,
  params: P,
) {
  const request = params ? { params } : {};
  return {
    set: defineRoute({
      method: "PUT",
      path,
      level: "admin",
      summary: `Set quota constraints for ${scope} (the ones given; "" means not given)`,
      audit: { type: "QUOTAS", change: "UPDATE" },
      tags,
      request: { ...request, body: quotaValuesBody } as { params: P; body: typeof quotaValuesBody },
      responses: { 200: json(quotaChanged, "The entry as it stands after the change") },
    }),
    remove: defineRoute({
      method: "DELETE",
      path,
      level: "admin",
      summary: `Remove quota constraints of ${scope} (a JSON array of names; empty or absent: all three; never set: 200)`,
      audit: { type: "QUOTAS", change: "REMOVE" },
      tags,
      request: { ...request, body: quotaKeysBody } as { params: P; body: typeof quotaKeysBody },
      responses: { 200: json(quotaChanged, "The entry as it stands after the change") },
    }),
  };
}

const allUsers = changeRoutes("/api/quotas/users", "the default user", undefined);
const userAllClients = changeRoutes("/api/quotas/users/{user}/clients", "every client id of one user (its default client)", userParams);
const userClient = changeRoutes("/api/quotas/users/{user}/clients/{clientId}", "one user and client id pair", userClientParams);
const oneUser = changeRoutes("/api/quotas/users/{user}", "one user", userParams);
const allClients = changeRoutes("/api/quotas/clients", "the default client", undefined);
const oneClient = changeRoutes("/api/quotas/clients/{clientId}", "one client id", clientParams);

export const quotasApi = {
  list: defineRoute({
    method: "GET",
    path: "/api/quotas",
    level: "nodata",
    summary: "Every client quota of the cluster (users, client ids, their defaults)",
    tags,
    responses: { 200: json(quotaList) },
  }),
  effective: defineRoute({
    method: "GET",
    path: "/api/quotas/effective",
    level: "nodata",
    summary: "Which quota applies to a user with a client id, constraint by constraint, and from which entry",
    tags,
    request: { query: effectiveQuery },
    responses: { 200: json(effectiveQuota) },
  }),
  setAllUsers: allUsers.set,
  removeAllUsers: allUsers.remove,
  setUserAllClients: userAllClients.set,
  removeUserAllClients: userAllClients.remove,
  setUserClient: userClient.set,
  removeUserClient: userClient.remove,
  setUser: oneUser.set,
  removeUser: oneUser.remove,
  setAllClients: allClients.set,
  removeAllClients: allClients.remove,
  setClient: oneClient.set,
  removeClient: oneClient.remove,
} satisfies Record<string, AnyRoute>;

/** What the audit entry names: the entry's SPEC type and names, and what is asked of it. */
const audited = (target: QuotaTarget, asked: Record<string, unknown>) => ({ ...describeTarget(target), ...asked });

export function quotasRoutes(service: QuotaService) {
  const app = new RouteGroup();

  app.handle(quotasApi.list, async (c) => {
    const session = c.get("session");
    const canChange = session !== undefined && levelAllows("admin", session.scope, clusterOf(c));
    return c.json(await service.list(clusterOf(c), canChange), 200);
  });
  app.handle(quotasApi.effective, async (c) => {
    const q = c.req.valid("query");
    return c.json(await service.effective(clusterOf(c), q.user, q.clientId), 200);
  });

  const done = (c: Context<AppEnv>, target: QuotaTarget, asked: Record<string, unknown>, change: QuotaChange) => {
    c.set("auditContent", audited(target, { ...asked, before: change.before }));
    return c.json(change.entry, 200);
  };
  const set = async (c: Context<AppEnv>, target: QuotaTarget, values: QuotaValues) => {
    const given = Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined));
    c.set("auditContent", audited(target, { set: given }));
    return done(c, target, { set: given }, await service.set(clusterOf(c), target, values));
  };
  const remove = async (c: Context<AppEnv>, target: QuotaTarget, keys: QuotaKey[]) => {
    c.set("auditContent", audited(target, { remove: keys }));
    return done(c, target, { remove: keys }, await service.remove(clusterOf(c), target, keys));
  };

  const user = (p: { user: string }) => nameOf(p.user);
  const client = (p: { clientId: string }) => nameOf(p.clientId);
  app.handle(quotasApi.setAllUsers, (c) => set(c, { user: null }, c.req.valid("json")));
  app.handle(quotasApi.removeAllUsers, (c) => remove(c, { user: null }, c.req.valid("json")));
  app.handle(quotasApi.setUserAllClients, (c) => set(c, { user: user(c.req.valid("param")), clientId: null }, c.req.valid("json")));
  app.handle(quotasApi.removeUserAllClients, (c) => remove(c, { user: user(c.req.valid("param")), clientId: null }, c.req.valid("json")));
  app.handle(quotasApi.setUserClient, (c) => {
    const p = c.req.valid("param");
    return set(c, { user: user(p), clientId: client(p) }, c.req.valid("json"));
  });
  app.handle(quotasApi.removeUserClient, (c) => {
    const p = c.req.valid("param");
    return remove(c, { user: user(p), clientId: client(p) }, c.req.valid("json"));
  });
  app.handle(quotasApi.setUser, (c) => set(c, { user: user(c.req.valid("param")) }, c.req.valid("json")));
  app.handle(quotasApi.removeUser, (c) => remove(c, { user: user(c.req.valid("param")) }, c.req.valid("json")));
  app.handle(quotasApi.setAllClients, (c) => set(c, { clientId: null }, c.req.valid("json")));
  app.handle(quotasApi.removeAllClients, (c) => remove(c, { clientId: null }, c.req.valid("json")));
  app.handle(quotasApi.setClient, (c) => set(c, { clientId: client(c.req.valid("param")) }, c.req.valid("json")));
  app.handle(quotasApi.removeClient, (c) => remove(c, { clientId: client(c.req.valid("param")) }, c.req.valid("json")));
  return app;
}
