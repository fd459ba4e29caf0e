import type { Context } from "hono";
import type { AppEnv } from "../../http/context.ts";
import type { KafkaPool } from "../../kafka/index.ts";

/**
 * The cluster a request acts on: the `x-service-cluster` header (checked against the config by
 * the app's middleware), else the default cluster.
 */
export function clusterOf(c: Context<AppEnv>, pool: KafkaPool): string {
  return c.req.header("x-service-cluster") ?? pool.default().name;
}

/** The caller's user name, for audit entries written after the request. */
export function userOf(c: Context<AppEnv>): string {
  return c.get("session")?.user.name ?? "anonymous";
}
