import type { Context } from "hono";
import { z } from "zod";
import type { AppEnv } from "../../http/context.ts";
import { clusterOf } from "../../http/context.ts";
import { type AnyRoute, defineRoute, json, jsonText, RouteGroup, text } from "../../http/route.ts";
import { type BrokerConfigBody, type KafkaConfigService, MAX_CONFIG_KEYS, requestedChange, targetName } from "./service.ts";

const configName = z.string().min(1).max(255);
const brokerParams = z.object({
  brokerId: z
    .string()
    .regex(/^\d{1,10}$/, "brokerId must be a non-negative integer")
    .transform(Number)
    .pipe(z.number().int().max(2_147_483_647, "brokerId must be at most 2147483647")),
});

/** `{"name": value}`; the Go client sends every key it knows, unset ones as 0 or "". */
const updateBody = z
  .record(configName, z.union([z.string().max(100_000), z.number().finite(), z.boolean(), z.null()]))
  .refine((o) => Object.keys(o).length <= MAX_CONFIG_KEYS, `at most ${MAX_CONFIG_KEYS} configs at once`);
/** The names of the settings to remove. */
const removeBody = z.array(configName).min(1, "name at least one config").max(MAX_CONFIG_KEYS);

const brokerConfigs = z
  .record(z.string(), z.union([z.string(), z.number(), z.boolean()]))
  .describe("Config name to value, typed by the config's Kafka type (numbers, booleans, strings); secrets and valueless configs left out");

const tags = ["broker configs"];
const CLUSTER_WIDE = "/api/configs/brokers";
const ONE_BROKER = "/api/configs/brokers/{brokerId}";

export const configsApi = {
  topicKeys: defineRoute({
    method: "GET",
    path: "/api/configs/default/topics/keys",
    level: "nodata",
    summary: "The names of the configs a topic has on the cluster's brokers",
    tags: ["topics"],
    responses: { 200: json(z.array(z.string())) },
  }),
  clusterDefaults: defineRoute({
    method: "GET",
    path: CLUSTER_WIDE,
    level: "nodata",
    summary: "The cluster-wide dynamic broker defaults that are set",
    tags,
    responses: { 200: json(brokerConfigs) },
  }),
  updateClusterDefaults: defineRoute({
    method: "PUT",
    path: CLUSTER_WIDE,
    level: "admin",
    summary: 'Set cluster-wide dynamic broker defaults (0 and "" mean not given)',
    audit: { type: "BROKER_CONFIG", change: "UPDATE" },
    tags,
    request: { body: updateBody },
    responses: { 200: text("`Configuration of the cluster-wide broker defaults updated`") },
  }),
  removeClusterDefaults: defineRoute({
    method: "DELETE",
    path: CLUSTER_WIDE,
    level: "admin",
    summary: "Remove cluster-wide dynamic broker defaults (a JSON array of names)",
    audit: { type: "BROKER_CONFIG", change: "REMOVE" },
    tags,
    request: { body: removeBody },
    responses: { 200: text("`Configuration of the cluster-wide broker defaults updated`") },
  }),
  broker: defineRoute({
    method: "GET",
    path: ONE_BROKER,
    level: "nodata",
    summary: "A broker's configs",
    tags,
    request: { params: brokerParams },
    responses: { 200: json(brokerConfigs) },
  }),
  updateBroker: defineRoute({
    method: "PUT",
    path: ONE_BROKER,
    level: "admin",
    summary: 'Set dynamic configs of one broker (0 and "" mean not given)',
    audit: { type: "BROKER_CONFIG", change: "UPDATE" },
    tags,
    request: { params: brokerParams, body: updateBody },
    responses: { 200: text("`Configuration of broker <id> updated`") },
  }),
  removeFromBroker: defineRoute({
    method: "DELETE",
    path: ONE_BROKER,
    level: "admin",
    summary: "Remove dynamic configs of one broker (a JSON array of names)",
    audit: { type: "BROKER_CONFIG", change: "REMOVE" },
    tags,
    request: { params: brokerParams, body: removeBody },
    responses: { 200: text("`Configuration of broker <id> updated`") },
  }),
} satisfies Record<string, AnyRoute>;

/** The path names the broker (brokerId is in every entry); the cluster-wide routes name none. */
const auditOf = (brokerId: number | null, configs: Record<string, string>) => ({
  ...(brokerId === null ? { scope: "cluster-wide" } : {}),
  configs,
});

export function configsRoutes(service: KafkaConfigService) {
  const app = new RouteGroup();

  app.handle(configsApi.topicKeys, async (c) => c.json(await service.topicConfigKeys(clusterOf(c))));

  // Built as text: a LONG beyond 2^53 keeps its exact digits (values.ts).
  const answer = async (c: Context<AppEnv>, brokerId: number | null) =>
    jsonText(c, await service.brokerConfigsJson(clusterOf(c), brokerId));
  app.handle(configsApi.clusterDefaults, (c) => answer(c, null));
  app.handle(configsApi.broker, (c) => answer(c, c.req.valid("param").brokerId));

  // The audit entry names the change before it is made: as requested (values that may be
  // secrets masked) until it is checked, then with the broker's own secret flags.
  const update = async (c: Context<AppEnv>, brokerId: number | null, body: BrokerConfigBody) => {
    c.set("auditContent", auditOf(brokerId, requestedChange(body)));
    const plan = await service.planUpdate(clusterOf(c), brokerId, body);
    c.set("auditContent", auditOf(brokerId, plan.configs));
    await service.apply(clusterOf(c), plan);
    return c.text(`Configuration of ${targetName(brokerId)} updated`, 200);
  };
  const remove = async (c: Context<AppEnv>, brokerId: number | null, keys: string[]) => {
    c.set("auditContent", auditOf(brokerId, requestedChange(keys)));
    const plan = await service.planRemoval(clusterOf(c), brokerId, keys);
    c.set("auditContent", auditOf(brokerId, plan.configs));
    await service.apply(clusterOf(c), plan);
    return c.text(`Configuration of ${targetName(brokerId)} updated`, 200);
  };
  app.handle(configsApi.updateClusterDefaults, (c) => update(c, null, c.req.valid("json")));
  app.handle(configsApi.removeClusterDefaults, (c) => remove(c, null, c.req.valid("json")));
  app.handle(configsApi.updateBroker, (c) => update(c, c.req.valid("param").brokerId, c.req.valid("json")));
  app.handle(configsApi.removeFromBroker, (c) => remove(c, c.req.valid("param").brokerId, c.req.valid("json")));
  return app;
}
