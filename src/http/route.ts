import { createRoute, OpenAPIHono, type RouteConfig } from "@hono/zod-openapi";
import type { Context, Handler, MiddlewareHandler } from "hono";
import { z } from "zod";
import { AppError } from "../errors.ts";
import { type AccessRule, type Level, rolesText } from "./access.ts";
import type { AppEnv } from "./context.ts";
import { jsonBody, parseWith } from "./validate.ts";

/**
 * One route, declared once: method, path, access rule, schemas and documentation together.
 * The access table (what `authorize` enforces, the role matrix walks and docs/api.md shows),
 * the OpenAPI document and the request validation are all read from this one value, so they
 * cannot disagree with each other or with the handler `RouteGroup.handle` binds to it.
 */
export interface RouteSpec<P extends z.ZodType | undefined, Q extends z.ZodType | undefined, B extends z.ZodType | undefined> {
  method: AccessRule["method"];
  /** OpenAPI form, `/api/topics/{topicName}`; the router's form is derived by `createRoute`. */
  path: string;
  level: Level;
  summary: string;
  /** See `AccessRule.audit`. */
  audit?: AccessRule["audit"];
  tags: string[];
  request?: { params?: P; query?: Q; body?: B };
  /** The answers on success (errors are the COMPAT body, documented once for every route). */
  responses: RouteConfig["responses"];
  /** Left out of the OpenAPI document: the UI's pages and files are not API. */
  hidden?: boolean;
}

export interface ApiRoute<P extends z.ZodType | undefined, Q extends z.ZodType | undefined, B extends z.ZodType | undefined> {
  readonly access: AccessRule;
  readonly doc: RouteConfig;
  readonly hidden: boolean;
  readonly schemas: { params?: P; query?: Q; body?: B };
}

// biome-ignore lint/suspicious/noExplicitAny: the list of every route, whatever its schemas
export type AnyRoute = ApiRoute<any, any, any>;

/** The COMPAT.md error body, the `default` answer of every operation. */
const errorAnswer = {
  description: "Error (COMPAT body)",
  content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
};

export function defineRoute<
  P extends z.ZodType | undefined = undefined,
  Q extends z.ZodType | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
>(spec: RouteSpec<P, Q, B>): ApiRoute<P, Q, B> {
  const { params, query, body } = spec.request ?? {};
  // The path's parameters and the params schema name the same fields, or the route is not declared.
  const inPath = spec.path
    .split("/")
    .filter((s) => s.startsWith("{") && s.endsWith("}"))
    .map((s) => s.slice(1, -1));
  const inSchema = params instanceof z.ZodObject ? Object.keys(params.shape) : [];
  if (inPath.join() !== inSchema.join())
    throw new Error(
      `${spec.method} ${spec.path}: path parameters (${inPath.join(", ")}) differ from its params schema (${inSchema.join(", ")})`,
    );
  const config = createRoute({
    method: spec.method.toLowerCase() as Lowercase<AccessRule["method"]>,
    path: spec.path,
    summary: spec.summary,
    description: `Roles: ${rolesText(spec.level)}.${spec.audit ? ` Audited as ${spec.audit.type} ${spec.audit.change}.` : ""}`,
    tags: spec.tags,
    ...(spec.level === "public" ? {} : { security: [{ token: [] }, { bearer: [] }] }),
    request: {
      ...(params ? { params: params as z.ZodType as RequestParams } : {}),
      ...(query ? { query: query as z.ZodType as RequestParams } : {}),
      // Documented as JSON; read as JSON whatever the content type says (see jsonBody).
      ...(body ? { body: { required: true, content: { "application/json": { schema: body as z.ZodType } } } } : {}),
    },
    responses: { ...spec.responses, default: errorAnswer },
  });
  const access: AccessRule = {
    method: spec.method,
    path: config.getRoutingPath(),
    level: spec.level,
    summary: spec.summary,
    ...(spec.audit ? { audit: spec.audit } : {}),
  };
  return { access, doc: config, hidden: spec.hidden === true, schemas: { params, query, body } as ApiRoute<P, Q, B>["schemas"] };
}

type RequestParams = NonNullable<NonNullable<RouteConfig["request"]>["params"]>;

/** Answer helpers for `responses`. */
export const json = (schema: z.ZodType, description = "Success") => ({ description, content: { "application/json": { schema } } });
export const text = (description: string, type = "text/plain") => ({
  description,
  content: { [type]: { schema: { type: "string" as const } } },
});
export const eventStream = (description: string) => text(description, "text/event-stream");

/** Route-level, so that Hono has filled the path parameters (decoded once) by the time it runs. */
export function guarded(rule: AccessRule): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const guard = c.get("guard");
    if (!guard) throw new AppError("INTERNAL", `No access guard for ${rule.method} ${rule.path}`);
    const res = await guard(rule, c, next);
    if (res) return res;
  };
}

type Out<S> = S extends z.ZodType ? z.output<S> : never;
type In<S> = S extends z.ZodType ? z.input<S> : never;
type InputOf<P, Q, B> = {
  in: { param: In<P>; query: In<Q>; json: In<B> };
  out: { param: Out<P>; query: Out<Q>; json: Out<B> };
};

export interface HandleOptions {
  /** Runs when validation or the handler refuses the request, before the error is answered. */
  onRefused?(c: Context<AppEnv>, err: unknown): Promise<void>;
}

/**
 * The routes of one area. `handle` binds a declared route to its handler: the guard of its
 * rule first, then its schemas (`c.req.valid("param" | "query" | "json")` in the handler),
 * then the handler; the declaration goes into the group's OpenAPI registry, which the app
 * merges when it mounts the group.
 */
export class RouteGroup extends OpenAPIHono<AppEnv> {
  /** The rules of the routes handled here, in order; merged by `collectRules`. */
  readonly rules: AccessRule[] = [];

  handle<P extends z.ZodType | undefined, Q extends z.ZodType | undefined, B extends z.ZodType | undefined>(
    route: ApiRoute<P, Q, B>,
    handler: Handler<AppEnv, string, InputOf<P, Q, B>>,
    options: HandleOptions = {},
  ): this {
    if (!route.hidden) this.openAPIRegistry.registerPath(route.doc);
    this.rules.push(route.access);
    const { params, query, body } = route.schemas;
    const { method, path } = route.access;
    this.on(method, path, guarded(route.access), async (c, next) => {
      try {
        if (params) c.req.addValidatedData("param", parseWith(params, c.req.param(), "path parameters") as object);
        if (query) c.req.addValidatedData("query", parseWith(query, c.req.query(), "query parameters") as object);
        if (body) c.req.addValidatedData("json", (await jsonBody(c, body)) as object);
        // biome-ignore lint/suspicious/noExplicitAny: the context is the same; only its input type differs
        return await handler(c as any, next);
      } catch (e) {
        await options.onRefused?.(c, e);
        throw e;
      }
    });
    return this;
  }
}
