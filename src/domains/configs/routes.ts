import type { Context } from "hono";
import { z } from "zod";
import type { AppEnv } from "../../http/context.ts";
import { clusterOf } from "../../http/context.ts";
import { type AnyRoute, defineRoute, json, jsonText, RouteGroup, text } from "../../http/route.ts";
import {
  type BrokerConfigBody,
  type BrokerConfigPlan,
  type KafkaConfigService,
  MAX_CONFIG_KEYS,
  requestedChange,
  targetName,
} from "./service.ts";

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

/** A change of dynamic broker configs: admin, audited (PUT sets, DELETE removes), answered in text. */
const change = <P extends z.ZodType | undefined, B extends z.ZodType>(
  method: "PUT" | "DELETE",
  path: typeof CLUSTER_WIDE | typeof ONE_BROKER,
  summary: string,
  request: { params?: P; body: B },
) =>
  defineRoute({
    method,
    path,
    level: "admin",
    summary,
    audit: { type: "BROKER_CONFIG", change: method === "PUT" ? "UPDATE" : "REMOVE" },
    tags,
    request,
    responses: {
      200: text(
        path === CLUSTER_WIDE ? "`Configuration of the cluster-wide broker defaults updated`" : "`Configuration of broker <id> updated`",
      ),
    },
  });

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
  updateClusterDefaults: change("PUT", CLUSTER_WIDE, 'Set cluster-wide dynamic broker defaults (0 and "" mean not given)', {
    body: updateBody,
  }),
  removeClusterDefaults: change("DELETE", CLUSTER_WIDE, "Remove cluster-wide dynamic broker defaults (a JSON array of names)", {
    body: removeBody,
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
  updateBroker: change("PUT", ONE_BROKER, 'Set dynamic configs of one broker (0 and "" mean not given)', {
    params: brokerParams,
    body: updateBody,
  }),
  removeFromBroker: change("DELETE", ONE_BROKER, "Remove dynamic configs of one broker (a JSON array of names)", {
    params: brokerParams,
    body: removeBody,
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
  const apply = async (
    c: Context<AppEnv>,
    brokerId: number | null,
    requested: Record<string, string>,
    plan: () => Promise<BrokerConfigPlan>,
  ) => {
    c.set("auditContent", auditOf(brokerId, requested));
    const planned = await plan();
    c.set("auditContent", auditOf(brokerId, planned.configs));
    await service.apply(clusterOf(c), planned);
    return c.text(`Configuration of ${targetName(brokerId)} updated`, 200);
  };
  const update = (c: Context<AppEnv>, brokerId: number | null, body: BrokerConfigBody) =>
    apply(c, brokerId, requestedChange(body), () => service.planUpdate(clusterOf(c), brokerId, body));
  const remove = (c: Context<AppEnv>, brokerId: number | null, keys: string[]) =>
    apply(c, brokerId, requestedChange(keys), () => service.planRemoval(clusterOf(c), brokerId, keys));
  app.handle(configsApi.updateClusterDefaults, (c) => update(c, null, c.req.valid("json")));
  app.handle(configsApi.removeClusterDefaults, (c) => remove(c, null, c.req.valid("json")));
  app.handle(configsApi.updateBroker, (c) => update(c, c.req.valid("param").brokerId, c.req.valid("json")));
  app.handle(configsApi.removeFromBroker, (c) => remove(c, c.req.valid("param").brokerId, c.req.valid("json")));
  return app;
}
