import type { Context } from "hono";
import { z } from "zod";
import { AppError } from "../errors.ts";
import type { AppEnv } from "./context.ts";
import { type ApiRoute, defineRoute, json, RouteGroup } from "./route.ts";

/**
 * The admin API of one kind of named resource (groups, users, service accounts; ACLs and quotas
 * next), written once: list, create, get, change and delete, at `<path>` and `<path>/{name}`,
 * for unrestricted admins, each change audited as USER ADD / UPDATE / REMOVE with what it did.
 * A change may repeat the name but not change it (a rename is a new resource: 400); conflicts
 * and missing names are the service's `AppError`s (409, 404), answered as every error is.
 */
export interface CrudSpec<K extends z.ZodType<string>, V extends z.ZodType, C extends z.ZodType, U extends z.ZodType, N extends z.ZodType> {
  /** The collection's path, `/api/groups`. */
  path: string;
  /** The resource in words, `group`, `service account`: in the name's description and in refusals. */
  noun: string;
  tags: string[];
  /** The name's schema (a path parameter, and the create body's `name`). */
  name: K;
  /** One resource as answered. */
  view: V;
  /** The answer to a creation when it says more than `view` (a secret shown once). */
  created?: N;
  createBody: C;
  /** A change: the fields it changes; `name` may be repeated. */
  changeBody: U;
  summaries: { list: string; create: string; get: string; update: string; remove: string };
  /** What the answers of create, update and remove are, in the OpenAPI document. */
  answers: { created: string; updated: string; removed: string };
}

type NameParams = z.ZodObject<{ name: z.ZodType<string> }>;

/** A JSON answer of schema `S`, as `json(S)` declares it: what `RouteGroup.handle` holds the handler to. */
type JsonAnswer<S extends z.ZodType> = { description: string; content: { "application/json": { schema: S } } };

export type CrudApi<V extends z.ZodType, C extends z.ZodType, U extends z.ZodType, N extends z.ZodType = V> = {
  list: ApiRoute<undefined, undefined, undefined, { 200: JsonAnswer<z.ZodArray<V>> }>;
  create: ApiRoute<undefined, undefined, C, { 201: JsonAnswer<N> }>;
  get: ApiRoute<NameParams, undefined, undefined, { 200: JsonAnswer<V> }>;
  update: ApiRoute<NameParams, undefined, U, { 200: JsonAnswer<V> }>;
  remove: ApiRoute<NameParams, undefined, undefined, { 200: JsonAnswer<V> }>;
};

/** The five routes' declarations, in the order of the access table. */
export function crudApi<
  K extends z.ZodType<string>,
  V extends z.ZodType,
  C extends z.ZodType,
  U extends z.ZodType,
  N extends z.ZodType = V,
>(spec: CrudSpec<K, V, C, U, N>): CrudApi<V, C, U, N> {
  const { path, tags, summaries, answers } = spec;
  const params: NameParams = z.object({ name: spec.name.describe(`the ${spec.noun}'s name`) });
  const one = `${path}/{name}`;
  return {
    list: defineRoute({ method: "GET", path, level: "admin", summary: summaries.list, tags, responses: { 200: json(z.array(spec.view)) } }),
    create: defineRoute({
      method: "POST",
      path,
      level: "admin",
      summary: summaries.create,
      audit: { type: "USER", change: "ADD" },
      tags,
      request: { body: spec.createBody },
      responses: { 201: json((spec.created ?? spec.view) as N, answers.created) },
    }),
    get: defineRoute({
      method: "GET",
      path: one,
      level: "admin",
      summary: summaries.get,
      tags,
      request: { params },
      responses: { 200: json(spec.view) },
    }),
    update: defineRoute({
      method: "PUT",
      path: one,
      level: "admin",
      summary: summaries.update,
      audit: { type: "USER", change: "UPDATE" },
      tags,
      request: { params, body: spec.changeBody },
      responses: { 200: json(spec.view, answers.updated) },
    }),
    remove: defineRoute({
      method: "DELETE",
      path: one,
      level: "admin",
      summary: summaries.remove,
      audit: { type: "USER", change: "REMOVE" },
      tags,
      request: { params },
      responses: { 200: json(spec.view, answers.removed) },
    }),
  };
}

type AuditContent = Record<string, unknown>;

/** What one kind of resource does behind its five routes. */
export interface CrudHandlers<View, Created, CreateIn, ChangeIn> {
  /** What an audit entry says of a whole resource, created or deleted (never a secret). */
  described(view: View | Created): AuditContent;
  list(c: Context<AppEnv>): Promise<View[]>;
  get(name: string, c: Context<AppEnv>): Promise<View>;
  create(body: CreateIn, c: Context<AppEnv>): Promise<Created>;
  /** The resource after the change, and what the audit entry says of the change. */
  update(name: string, change: Omit<ChangeIn, "name">, c: Context<AppEnv>): Promise<{ view: View; audit: AuditContent }>;
  remove(name: string, c: Context<AppEnv>): Promise<View>;
}

/** The five routes of `api` over `handlers`, in a group of their own (more routes may be added to it). */
export function crudRoutes<V extends z.ZodType, C extends z.ZodType, U extends z.ZodType, N extends z.ZodType>(
  api: CrudApi<V, C, U, N>,
  noun: string,
  handlers: CrudHandlers<z.output<V>, z.output<N>, z.output<C>, z.output<U>>,
): RouteGroup {
  const app = new RouteGroup();
  // The answers are the handlers', typed by the area's schemas (CrudHandlers above); a generic
  // body cannot be matched to its schema here, so the JSON is passed on as it is typed there.
  app.handle(api.list, async (c) => c.json((await handlers.list(c)) as object));
  app.handle(api.create, async (c) => {
    const created = await handlers.create(c.req.valid("json") as z.output<C>, c);
    c.set("auditContent", handlers.described(created));
    return c.json(created as object, 201);
  });
  app.handle(api.get, async (c) => c.json((await handlers.get(c.req.valid("param").name, c)) as object));
  app.handle(api.update, async (c) => {
    const name = c.req.valid("param").name;
    const { name: named, ...change } = c.req.valid("json") as z.output<U> & { name?: string };
    if (named !== undefined && named !== name)
      throw new AppError("BAD_REQUEST", `The body names ${noun} '${named}' but the path '${name}': a ${noun} cannot be renamed`);
    const { view, audit } = await handlers.update(name, change as Omit<z.output<U>, "name">, c);
    c.set("auditContent", audit);
    return c.json(view as object);
  });
  app.handle(api.remove, async (c) => {
    const removed = await handlers.remove(c.req.valid("param").name, c);
    c.set("auditContent", handlers.described(removed));
    return c.json(removed as object);
  });
  return app;
}

/** "a,b" for the fields a change changed, "nothing" when it changed none. */
export const changedFields = (changed: readonly string[]) => (changed.length ? changed.join(",") : "nothing");
