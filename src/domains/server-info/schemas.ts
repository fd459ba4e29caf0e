/** The answers of `GET /api/config` and `GET /api/license` (CLIENTS.md 5.1, 5.2). Imports only zod. */
import { z } from "zod";

const urlList = z.array(z.object({ url: z.string(), jmx: z.string() }));
export const clientConfig = z.object({
  "lenses.version": z.string(),
  "lenses.ip": z.string(),
  "lenses.port": z.number().int(),
  "lenses.kafka.brokers": z.string(),
  "lenses.security.mode": z.string(),
  "lenses.sql.execution.mode": z.literal("IN_PROC"),
  "lenses.schema.registry.urls": urlList,
  "lenses.zookeeper.hosts": urlList,
  "lenses.connect.clusters": z.array(
    z.object({ name: z.string(), urls: urlList, statuses: z.string(), configs: z.string(), offsets: z.string() }),
  ),
});

export const license = z.object({
  clientId: z.string(),
  isRespected: z.boolean(),
  maxBrokers: z.number().int(),
  maxMessages: z.number().int(),
  expiry: z.number().int().describe("epoch milliseconds"),
});

export type ClientConfig = z.output<typeof clientConfig>;
export type License = z.output<typeof license>;
