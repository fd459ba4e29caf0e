import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "zod";
import type { AppEnv } from "./context.ts";
import { defineRoute, json } from "./route.ts";

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

/**
 * The OpenAPI 3.1 document of every API route: the declarations the app's route groups
 * registered (merged when mounted).
 */
export function openApiDocument(app: OpenAPIHono<AppEnv>, version: string): Record<string, unknown> {
  const registry = app.openAPIRegistry;
  registry.registerComponent("schemas", "Error", errorSchema);
  registry.registerComponent("securitySchemes", "token", { type: "apiKey", in: "header", name: "x-service-token" });
  registry.registerComponent("securitySchemes", "bearer", { type: "http", scheme: "bearer" });
  return app.getOpenAPI31Document({
    openapi: "3.1.0",
    info: { title: "Loupe API", version, description: "Management and access layer over Apache Kafka." },
  }) as unknown as Record<string, unknown>;
}
