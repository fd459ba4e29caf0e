/**
 * The link between an identity's scope and the query language: the predicate the compiler asks
 * about the one topic a statement names. Built once per statement, so a query's records are never
 * checked one by one: the scope decides before anything is read.
 */
import type { Role } from "../../config/schema.ts";
import type { TopicAccess, TopicAllowed } from "../../sql/index.ts";
import { roleCovers, type Scope } from "../access/scope.ts";

/**
 * What a statement may name on `cluster`: undefined when the scope holds every topic (no check
 * at all). `run`: a query needs `read` on its topic and an INSERT `write`, as the routes running
 * them. `validate`: the same when the identity holds that role on the cluster at all, so that
 * validation predicts the run; otherwise any role on the topic will do, as validation is open to
 * every role (it reads nothing). Either way a topic out of scope is invalid, and validation does
 * not tell which topics exist beyond it.
 */
export function topicCheck(scope: Scope, cluster: string, mode: "run" | "validate"): TopicAllowed | undefined {
  const roles = mode === "validate" ? scope.clusterRoles(cluster) : [];
  const need = (access: TopicAccess): Role | undefined => (mode === "run" || roles.some((r) => roleCovers(r, access)) ? access : undefined);
  const readNeed = need("read");
  const writeNeed = need("write");
  const everyRead = scope.everyTopic(cluster, readNeed);
  const everyWrite = scope.everyTopic(cluster, writeNeed);
  if (everyRead && everyWrite) return undefined;
  return (topic, access) =>
    access === "write"
      ? everyWrite || (scope.refusal(cluster, topic, writeNeed) ?? true)
      : everyRead || (scope.refusal(cluster, topic, readNeed) ?? true);
}
