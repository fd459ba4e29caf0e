import { createRoute, OpenAPIHono, type RouteConfig } from "@hono/zod-openapi";
import type { Context, Handler, MiddlewareHandler, TypedResponse } from "hono";
import type { JSONParsed } from "hono/utils/types";
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
/** The answers a route declares, by status. */
export type Responses = RouteConfig["responses"];

export interface RouteSpec<
  P extends z.ZodType | undefined,
  Q extends z.ZodType | undefined,
  B extends z.ZodType | undefined,
  R extends Responses = Responses,
> {
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
  responses: R;
  /** Left out of the OpenAPI document: the UI's pages and files are not API. */
  hidden?: boolean;
}

export interface ApiRoute<
  P extends z.ZodType | undefined,
  Q extends z.ZodType | undefined,
  B extends z.ZodType | undefined,
  R extends Responses = Responses,
> {
  readonly access: AccessRule;
  /** Type only: the declared answers, which `RouteGroup.handle` holds the handler's answer to. */
  readonly responses?: R;
  readonly doc: RouteConfig;
  readonly hidden: boolean;
  readonly schemas: { params?: P; query?: Q; body?: B };
}

// biome-ignore lint/suspicious/noExplicitAny: the list of every route, whatever its schemas
export type AnyRoute = ApiRoute<any, any, any, any>;

/** The COMPAT.md error body, the `default` answer of every operation. */
const errorAnswer = {
  description: "Error (COMPAT body)",
  content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
};

export function defineRoute<
  P extends z.ZodType | undefined = undefined,
  Q extends z.ZodType | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
  const R extends Responses = Responses,
>(spec: RouteSpec<P, Q, B, R>): ApiRoute<P, Q, B, R> {
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
  return { access, doc: config, hidden: spec.hidden === true, schemas: { params, query, body } as ApiRoute<P, Q, B, R>["schemas"] };
}

type RequestParams = NonNullable<NonNullable<RouteConfig["request"]>["params"]>;

/** Answer helpers for `responses`. A `json` answer's schema is the type its handler must send. */
export const json = <S extends z.ZodType>(schema: S, description = "Success") => ({
  description,
  content: { "application/json": { schema } },
});
type TextAnswer<T extends string> = { description: string; content: { [K in T]: { schema: { type: "string" } } } };
// Overloads, not a default type argument: a generic `T` would be inferred from the place the
// answer is written (every media type a route may declare), and the answer would check nothing.
export function text(description: string): TextAnswer<"text/plain">;
export function text<T extends string>(description: string, type: T): TextAnswer<T>;
export function text(description: string, type = "text/plain"): TextAnswer<string> {
  return { description, content: { [type]: { schema: { type: "string" as const } } } };
}
export const eventStream = (description: string) => text(description, "text/event-stream");

declare const relayedMark: unique symbol;
/**
 * An answer passed on from an upstream service (Connect, the schema registry) as it came: its
 * schema documents the upstream's shape, which Loupe does not build, so its handler returns the
 * relayed `Response` unchecked. A type-only mark: the declaration is the same object.
 */
export const relayed = <A extends object>(answer: A) => answer as A & { readonly [relayedMark]: true };

/**
 * A JSON answer already serialised (to keep digits a JavaScript number would lose), typed by
 * what it holds: the handler returns it through `jsonText`, checked as `c.json` would be.
 */
export type JsonText<T> = string & { readonly jsonOf?: T };

export function jsonText<T, S extends ContentfulStatusCode = 200>(
  c: Context,
  body: JsonText<T>,
  status: S = 200 as S,
): Response & TypedResponse<JSONParsed<T>, S, "json"> {
  const res: Response = c.body(body, status, { "content-type": "application/json" });
  return res as Response & TypedResponse<JSONParsed<T>, S, "json">;
}

/**
 * What a handler may return for the declared answers: for a JSON answer, `c.json(body, status)`
 * with a body of its schema's type and its status; for a plain-text one, `c.text(..., status)`;
 * any other answer (a stream, a file, no body) is a `Response` as it stands.
 */
export type Answer<R> = Responses extends R ? Response : DeclaredAnswer<R>;
/** (A route typed only as `Responses`, declared by a generic helper, is not narrowed: any Response.) */
type DeclaredAnswer<R> = {
  [S in keyof R]: S extends StatusCode
    ? R[S] extends { readonly [relayedMark]: true }
      ? Response
      : R[S] extends { content: infer C }
        ? ContentAnswer<C, S>
        : Response
    : never;
}[keyof R];
type ContentAnswer<C, S extends StatusCode> = {
  [M in keyof C]: M extends "application/json"
    ? C[M] extends { schema: infer Z extends z.ZodType }
      ? TypedResponse<JSONParsed<z.output<Z>>, S, "json">
      : Response
    : M extends "text/plain"
      ? TypedResponse<string, S, "text">
      : Response;
}[keyof C];
type StatusCode = import("hono/utils/http-status").StatusCode;
type ContentfulStatusCode = import("hono/utils/http-status").ContentfulStatusCode;

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

  handle<P extends z.ZodType | undefined, Q extends z.ZodType | undefined, B extends z.ZodType | undefined, R extends Responses>(
    route: ApiRoute<P, Q, B, R>,
    handler: Handler<AppEnv, string, InputOf<P, Q, B>, Answer<R> | Promise<Answer<R>>>,
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
