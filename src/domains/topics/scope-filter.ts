import type { Context } from "hono";
import { ROLES, type Role } from "../../config/schema.ts";
import { type AppEnv, clusterOf } from "../../http/context.ts";
import type { TopicUse } from "../access/scope.ts";
import type { TopicFilter } from "./visibility.ts";

const isRole = (level: string | undefined): level is Role => (ROLES as readonly string[]).includes(level ?? "");

/**
 * The caller's topic filter on the request's cluster, for `role` (by default the route's level,
 * as the access check reads a topic named in the path): null when the scope covers every topic.
 * Answers are remembered for the request, since a group's partitions name the same topics many
 * times over. `use`: records (the default: internal topics are an unrestricted admin's only) or
 * metadata (a consumer group's offsets and lag; see TopicUse).
 */
export function topicFilterOf(c: Context<AppEnv>, role?: Role, use: TopicUse = "records"): TopicFilter {
  const scope = c.get("session")?.scope;
  // Only public routes run without a session, and none of them lists topics: show nothing.
  if (!scope) return () => false;
  const level = c.get("rule")?.level;
  const needed = role ?? (isRole(level) ? level : undefined);
  const cluster = clusterOf(c);
  if (scope.everyTopic(cluster, needed, use)) return null;
  const seen = new Map<string, boolean>();
  return (topic) => {
    let allowed = seen.get(topic);
    if (allowed === undefined) {
      allowed = scope.topicAllowed(cluster, topic, needed, use);
      seen.set(topic, allowed);
    }
    return allowed;
  };
}
