import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../../http/context.ts";
import { clusterOf } from "../../http/context.ts";
import type { ApiDocs } from "../../http/openapi.ts";
import { jsonBody, pathParams } from "../../http/validate.ts";
import { partitionLag } from "../shared/schemas.ts";
import { topicName } from "../topics/names.ts";
import type { ConsumerService } from "./service.ts";

const groupParam = z.object({ group: z.string().min(1).max(255) });

const topicsField = z.array(topicName).max(1_000).optional();
/** One of: `to` earliest/latest, `timestamp` (epoch ms), or explicit `offsets`. */
export const offsetResetBody = z.union([
  z.object({ to: z.enum(["earliest", "latest"]), topics: topicsField }).strict(),
  z.object({ timestamp: z.number().int().min(0), topics: topicsField }).strict(),
  z
    .object({
      offsets: z
        .array(z.object({ topic: topicName, partition: z.number().int().min(0), offset: z.number().int().min(0) }).strict())
        .min(1)
        .max(100_000),
    })
    .strict(),
]);

const summary = z.object({
  id: z.string(),
  state: z.string(),
  protocolType: z.string(),
  protocol: z.string(),
  members: z.number(),
  topics: z.array(z.string()),
  lag: z.number(),
});
const partitionRef = z.object({ topic: z.string(), partition: z.number() });
const detail = z.object({
  id: z.string(),
  state: z.string(),
  protocolType: z.string(),
  protocol: z.string(),
  members: z.array(
    z.object({
      memberId: z.string(),
      groupInstanceId: z.string().nullable(),
      clientId: z.string(),
      host: z.string(),
      assignments: z.array(partitionRef),
    }),
  ),
  offsets: z.array(
    partitionLag.extend({
      lagSeconds: z.number().nullable(),
      memberId: z.string().nullable(),
      clientId: z.string().nullable(),
      host: z.string().nullable(),
    }),
  ),
  lag: z.number(),
});
const resetAnswer = z.object({ group: z.string(), offsets: z.array(partitionRef.extend({ offset: z.number() })) });

export function consumerRoutes(service: ConsumerService, docs: ApiDocs) {
  const app = new Hono<AppEnv>();
  const tags = ["consumer groups"];
  docs.describe({ method: "GET", path: "/api/consumers", response: z.array(summary), tags });
  docs.describe({ method: "GET", path: "/api/consumers/:group", response: detail, tags });
  docs.describe({ method: "PUT", path: "/api/consumers/:group/offsets", body: offsetResetBody, response: resetAnswer, tags });
  docs.describe({ method: "DELETE", path: "/api/consumers/:group", responseType: "text/plain", tags });

  app.get("/consumers", async (c) => c.json(await service.list(clusterOf(c))));

  app.get("/consumers/:group", async (c) => {
    const { group } = pathParams(c, groupParam);
    return c.json(await service.get(clusterOf(c), group));
  });

  app.put("/consumers/:group/offsets", async (c) => {
    const { group } = pathParams(c, groupParam);
    const body = await jsonBody(c, offsetResetBody);
    c.set("auditContent", { reset: body });
    const offsets = await service.resetOffsets(clusterOf(c), group, body);
    return c.json({ group, offsets });
  });

  app.delete("/consumers/:group", async (c) => {
    const { group } = pathParams(c, groupParam);
    await service.delete(clusterOf(c), group);
    return c.text(`Consumer group '${group}' deleted`);
  });
  return app;
}
