import { createRoute, type OpenAPIHono, type RouteConfig } from "@hono/zod-openapi";
import { z } from "zod";
import type { AccessRule } from "./access.ts";
import type { AppEnv } from "./context.ts";
import { defineRoute, json } from "./route.ts";

/**
 * TRANSITIONAL (with `LEGACY_RULES` in access.ts): documentation of the routes not yet
 * declared with `defineRoute` (the SQL routes), given next to their handlers with
 * `describe()`. Declared routes document themselves.
 */
export interface RouteDoc {
  method: string;
  path: string;
  query?: z.ZodType;
  body?: z.ZodType;
  bodyType?: string;
  response?: z.ZodType;
  responseType?: string;
  status?: number;
  tags?: string[];
}

export class ApiDocs {
  readonly routes: RouteDoc[] = [];
  describe(doc: RouteDoc): void {
    this.routes.push(doc);
  }
}

const errorSchema = {
  type: "object" as const,
  required: ["error_code", "message", "code", "requestId"],
  properties: {
    error_code: { type: "integer" as const, description: "HTTP status" },
    message: { type: "string" as const },
    code: { type: "string" as const, description: "Stable error code, SCREAMING_SNAKE" },
    requestId: { type: "string" as const },
    details: {},
  },
};

export const openApiRoute = defineRoute({
  method: "GET",
  path: "/api/openapi.json",
  level: "public",
  summary: "OpenAPI 3.1 document of this API",
  tags: ["service"],
  responses: { 200: json(z.record(z.string(), z.unknown()), "The OpenAPI 3.1 document") },
});

/** A legacy rule and its `describe()` documentation, as the route a declaration would make. */
function legacyRoute(rule: AccessRule, doc: RouteDoc | undefined): RouteConfig {
  // Path parameters are named in the OpenAPI form of the path; the legacy table has the router's.
  const names = rule.path
    .split("/")
    .filter((s) => s.startsWith(":"))
    .map((s) => s.slice(1));
  const declared = defineRoute({
    method: rule.method,
    path: rule.path
      .split("/")
      .map((s) => (s.startsWith(":") ? `{${s.slice(1)}}` : s))
      .join("/"),
    level: rule.level,
    summary: rule.summary,
    ...(rule.audit ? { audit: rule.audit } : {}),
    tags: doc?.tags ?? [rule.path.split("/")[2] ?? "api"],
    request: {
      ...(names.length ? { params: z.object(Object.fromEntries(names.map((n) => [n, z.string()]))) } : {}),
      ...(doc?.query ? { query: doc.query } : {}),
    },
    responses: {
      [doc?.status ?? 200]: doc?.response
        ? { description: "Success", content: { [doc.responseType ?? "application/json"]: { schema: doc.response } } }
        : doc?.responseType
          ? { description: "Success", content: { [doc.responseType]: { schema: { type: "string" as const } } } }
          : { description: "Success" },
    },
  });
  const body = doc?.body ? { body: { required: true, content: { [doc.bodyType ?? "application/json"]: { schema: doc.body } } } } : {};
  return createRoute({ ...declared.doc, request: { ...declared.doc.request, ...body } });
}

/**
 * The OpenAPI 3.1 document of every API route: the declarations the app's route groups
 * registered (merged when mounted), plus the legacy routes.
 */
export function openApiDocument(
  app: OpenAPIHono<AppEnv>,
  legacy: { rules: readonly AccessRule[]; docs: ApiDocs },
  version: string,
): Record<string, unknown> {
  const registry = app.openAPIRegistry;
  const docs = new Map(legacy.docs.routes.map((d) => [`${d.method} ${d.path}`, d]));
  for (const rule of legacy.rules) registry.registerPath(legacyRoute(rule, docs.get(`${rule.method} ${rule.path}`)));
  registry.registerComponent("schemas", "Error", errorSchema);
  registry.registerComponent("securitySchemes", "token", { type: "apiKey", in: "header", name: "x-service-token" });
  registry.registerComponent("securitySchemes", "bearer", { type: "http", scheme: "bearer" });
  return app.getOpenAPI31Document({
    openapi: "3.1.0",
    info: { title: "Loupe API", version, description: "Management and access layer over Apache Kafka." },
  }) as unknown as Record<string, unknown>;
}
