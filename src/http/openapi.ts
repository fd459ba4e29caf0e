import { z } from "zod";
import { type AccessRule, LEVEL_ROLES } from "./access.ts";

/**
 * Request and answer schemas of each route, for the OpenAPI document. Routes
 * describe themselves with `describe()` next to their handler, using the same zod
 * schemas that validate their input, so the document cannot drift from the code.
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

const jsonSchema = (s: z.ZodType) => z.toJSONSchema(s, { target: "draft-2020-12", unrepresentable: "any", io: "input" });

const errorSchema = {
  type: "object",
  required: ["error_code", "message", "code", "requestId"],
  properties: {
    error_code: { type: "integer", description: "HTTP status" },
    message: { type: "string" },
    code: { type: "string", description: "Stable error code, SCREAMING_SNAKE" },
    requestId: { type: "string" },
    details: {},
  },
};

export function openApiDocument(rules: AccessRule[], docs: ApiDocs, version: string): Record<string, unknown> {
  const byKey = new Map(docs.routes.map((d) => [`${d.method} ${d.path}`, d]));
  const paths: Record<string, Record<string, unknown>> = {};
  for (const rule of rules) {
    if (!rule.path.startsWith("/api") && rule.path !== "/metrics") continue;
    const doc = byKey.get(`${rule.method} ${rule.path}`);
    const oaPath = rule.path.replace(/:([A-Za-z0-9_]+)/g, "{$1}");
    const params: unknown[] = [...rule.path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => ({
      name: m[1],
      in: "path",
      required: true,
      schema: { type: "string" },
    }));
    if (doc?.query) {
      const qs = jsonSchema(doc.query) as { properties?: Record<string, unknown>; required?: string[] };
      for (const [name, schema] of Object.entries(qs.properties ?? {}))
        params.push({ name, in: "query", required: qs.required?.includes(name) ?? false, schema });
    }
    const roles = rule.level === "public" ? "none (public)" : LEVEL_ROLES[rule.level].join(", ");
    const op: Record<string, unknown> = {
      summary: rule.summary,
      description: `Roles: ${roles}.${rule.audit ? ` Audited as ${rule.audit.type} ${rule.audit.change}.` : ""}`,
      tags: doc?.tags ?? [rule.path.split("/")[2] ?? "ui"],
      parameters: params,
      responses: {
        [String(doc?.status ?? 200)]: {
          description: "Success",
          ...(doc?.response
            ? { content: { [doc.responseType ?? "application/json"]: { schema: jsonSchema(doc.response) } } }
            : doc?.responseType
              ? { content: { [doc.responseType]: { schema: { type: "string" } } } }
              : {}),
        },
        default: { description: "Error", content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } },
      },
    };
    if (rule.level !== "public") op.security = [{ token: [] }, { bearer: [] }];
    if (doc?.body) op.requestBody = { required: true, content: { [doc.bodyType ?? "application/json"]: { schema: jsonSchema(doc.body) } } };
    (paths[oaPath] ??= {})[rule.method.toLowerCase()] = op;
  }
  return {
    openapi: "3.1.0",
    info: { title: "Loupe API", version, description: "Management and access layer over Apache Kafka." },
    paths,
    components: {
      schemas: { Error: errorSchema },
      securitySchemes: {
        token: { type: "apiKey", in: "header", name: "x-service-token" },
        bearer: { type: "http", scheme: "bearer" },
      },
    },
  };
}
