import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../../http/context.ts";
import { clusterOf, userOf } from "../../http/context.ts";
import type { ApiDocs } from "../../http/openapi.ts";
import { pathParams, queryParams } from "../../http/validate.ts";
import { topicName } from "../topics/names.ts";
import type { MetadataService } from "./service.ts";
import { DATA_TYPES } from "./types.ts";

const topicParam = z.object({ topicName });

/** Types are checked by the service (case-insensitive, with the list of allowed values in the error). */
export const metadataQuery = z
  .object({
    keyType: z
      .string()
      .min(1)
      .max(32)
      .describe(`one of ${DATA_TYPES.join(", ")} (any case)`),
    valueType: z
      .string()
      .min(1)
      .max(32)
      .describe(`one of ${DATA_TYPES.join(", ")} (any case)`),
    keySchema: z.string().max(1_000_000).optional(),
    valueSchema: z.string().max(1_000_000).optional(),
  })
  .strict();

const metadata = z.object({
  topicName: z.string(),
  keyType: z.enum(DATA_TYPES),
  valueType: z.enum(DATA_TYPES),
  keySchema: z.string().optional(),
  valueSchema: z.string().optional(),
  inferred: z.boolean(),
});

export function metadataRoutes(service: MetadataService, docs: ApiDocs) {
  const app = new Hono<AppEnv>();
  const tags = ["topic metadata"];
  docs.describe({ method: "GET", path: "/api/metadata/topics", response: z.array(metadata), tags });
  docs.describe({ method: "GET", path: "/api/metadata/topics/:topicName", response: metadata, tags });
  docs.describe({ method: "POST", path: "/api/metadata/topics/:topicName", query: metadataQuery, response: metadata, tags });
  docs.describe({ method: "DELETE", path: "/api/metadata/topics/:topicName", tags });
  docs.describe({ method: "DELETE", path: "/api/system/topics/metadata/:topicName", tags });

  app.get("/metadata/topics", async (c) => c.json(await service.list(clusterOf(c))));

  app.get("/metadata/topics/:topicName", async (c) => {
    const { topicName: t } = pathParams(c, topicParam);
    return c.json(await service.get(clusterOf(c), t));
  });

  app.post("/metadata/topics/:topicName", async (c) => {
    const { topicName: t } = pathParams(c, topicParam);
    const q = queryParams(c, metadataQuery);
    c.set("auditContent", { keyType: q.keyType, valueType: q.valueType });
    return c.json(await service.set(clusterOf(c), t, q, userOf(c)));
  });

  const remove = async (c: import("hono").Context<AppEnv>) => {
    const { topicName: t } = pathParams(c, topicParam);
    await service.delete(clusterOf(c), t);
    return c.text(`Metadata for topic '${t}' removed`);
  };
  app.delete("/metadata/topics/:topicName", remove);
  app.delete("/system/topics/metadata/:topicName", remove);
  return app;
}
