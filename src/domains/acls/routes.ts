import { z } from "zod";
import { forbidden } from "../../errors.ts";
import { clusterOf } from "../../http/context.ts";
import { type AnyRoute, defineRoute, json, RouteGroup } from "../../http/route.ts";
import { topicFilterOf } from "../topics/scope-filter.ts";
import { requireTopics } from "../topics/visibility.ts";
import { described } from "./entries.ts";
import { aclBody, aclEntry, explainQuery, explanation } from "./schemas.ts";
import type { AclService } from "./service.ts";

const tags = ["acls"];
const PATH = "/api/acl";

export const aclApi = {
  list: defineRoute({
    method: "GET",
    path: PATH,
    level: "nodata",
    summary:
      "Every ACL binding of the cluster (400 when the brokers have no authorizer); a caller limited to some topics sees the literal bindings of those topics only",
    tags,
    responses: { 200: json(z.array(aclEntry)) },
  }),
  create: defineRoute({
    method: "PUT",
    path: PATH,
    level: "admin",
    summary: "Create an ACL binding from the six fields (patternType LITERAL unless PREFIXED); an existing one is left as it is",
    audit: { type: "ACL", change: "ADD" },
    tags,
    request: { body: aclBody },
    responses: { 200: json(aclEntry, "The binding, as the list shows it") },
  }),
  remove: defineRoute({
    method: "DELETE",
    path: PATH,
    level: "admin",
    summary: "Delete the ACL binding given in the body (404 when the cluster has no such binding)",
    audit: { type: "ACL", change: "REMOVE" },
    tags,
    request: { body: aclBody },
    responses: { 200: json(aclEntry, "The binding deleted") },
  }),
  explain: defineRoute({
    method: "GET",
    path: `${PATH}/explain`,
    level: "nodata",
    summary:
      "Whether a principal may do an operation on a resource, and which bindings decide it (Kafka's StandardAuthorizer rules); a caller limited to some topics asks of those topics only",
    tags,
    request: { query: explainQuery },
    responses: { 200: json(explanation) },
  }),
} satisfies Record<string, AnyRoute>;

export function aclRoutes(service: AclService) {
  const app = new RouteGroup();
  app.handle(aclApi.list, async (c) => c.json(await service.list(clusterOf(c), topicFilterOf(c, undefined, "metadata")), 200));
  app.handle(aclApi.create, async (c) => {
    const body = c.req.valid("json");
    c.set("auditContent", described(body));
    return c.json(await service.create(clusterOf(c), body), 200);
  });
  app.handle(aclApi.remove, async (c) => {
    const body = c.req.valid("json");
    c.set("auditContent", described(body));
    return c.json(await service.remove(clusterOf(c), body), 200);
  });
  app.handle(aclApi.explain, async (c) => {
    const q = c.req.valid("query");
    const visible = topicFilterOf(c, undefined, "metadata");
    if (visible !== null && q.resourceType !== "Topic")
      throw forbidden("Your access is limited to some topics: ask about a topic in your scope");
    requireTopics(visible, [q.resourceName]);
    return c.json(await service.explain(clusterOf(c), q), 200);
  });
  return app;
}
