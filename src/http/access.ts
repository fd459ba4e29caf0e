import type { Role } from "../config/schema.ts";
import type { AuditChange, AuditType } from "./audit-trail.ts";

/**
 * Who may call what. Each route's rule is part of its declaration (`defineRoute` in
 * route.ts); the table of all of them (src/routes.ts) is derived from the declarations and
 * every request is checked against its route's rule (by `authorize` in middleware.ts) before
 * the handler runs. A route registered in the app without a rule makes start-up fail
 * (`assertRoutesCovered`).
 *
 * Levels, each including the ones after it:
 *  - admin:  ACLs, quotas, users, audit and logs; only from a group without limits (every
 *            cluster, every topic): a scoped admin could otherwise widen their own scope

 *  - write:  changes to topics, metadata, processors, connectors, schemas, alert settings
 *  - read:   reading record contents
 *  - nodata: everything else that is visible, but never record contents
 *  - session: any signed-in identity, even one with no group yet (its own session, its password)
 *
 * Roles come from the identity's groups, each limited to some clusters and topics (see
 * src/domains/access/scope.ts): a route is checked against the roles the groups grant on the
 * request's cluster, and a route naming a topic also against the roles on that topic.
 */
export type Level = "public" | "session" | "nodata" | "read" | "write" | "admin";

export const LEVEL_ROLES: Record<Exclude<Level, "public">, readonly Role[]> = {
  session: ["admin", "write", "read", "nodata"],
  nodata: ["admin", "write", "read", "nodata"],
  read: ["admin", "write", "read"],
  write: ["admin", "write"],
  admin: ["admin"],
};

export interface AccessRule {
  method: "GET" | "POST" | "PUT" | "DELETE" | "PATCH";
  path: string;
  level: Level;
  summary: string;
  /**
   * When set, the call is audited: its intent is stored before the handler runs (503 when it
   * cannot be) and completed with the outcome. A denied call of a route without it is audited
   * as ACCESS DENY.
   */
  audit?: {
    type: AuditType;
    change: AuditChange;
    /**
     * What of the raw request (query and JSON body) the pending intent keeps; all of it when
     * absent (the audit service masks the secrets it knows). For bodies whose secrets only the
     * domain recognises (a connector's config): the intent must not store them even for a moment.
     */
    request?: (fields: Record<string, unknown>) => Record<string, unknown>;
  };
}

/**
 * What the access check reads of an identity's rights: a port, implemented by the access area's
 * Scope (src/domains/access/scope.ts), the union of the identity's groups.
 */
export interface AccessScope {
  /** Equal for equal rights: an open stream whose identity's key changes is closed. */
  readonly key: string;
  /** The roles granted by groups without limits (every cluster, every topic). */
  readonly unrestricted: ReadonlySet<Role>;
  /** The roles the groups grant on a cluster. */
  clusterRoles(cluster: string): Role[];
  /** Why the identity may not use a topic with a role, or undefined when it may. */
  refusal(cluster: string, topic: string, role?: Role): string | undefined;
}

/** The roles that count for a level on a cluster: for `admin`, only those of unlimited groups. */
export function heldRoles(
  level: Exclude<Level, "public" | "session">,
  scope: Pick<AccessScope, "unrestricted" | "clusterRoles">,
  cluster: string,
): Role[] {
  return level === "admin" ? [...scope.unrestricted] : scope.clusterRoles(cluster);
}

/**
 * The role decision, for a request and for an open stream alike: whether the identity's roles
 * on the cluster reach the level (a topic's own scope is checked apart, with `refusal`).
 */
export function levelAllows(level: Level, scope: Pick<AccessScope, "unrestricted" | "clusterRoles">, cluster: string): boolean {
  if (level === "public" || level === "session") return true;
  const allowed = LEVEL_ROLES[level];
  return heldRoles(level, scope, cluster).some((r) => allowed.includes(r));
}

/** The roles of a level as the OpenAPI document and the docs say them. */
export function rolesText(level: Level): string {
  if (level === "session") return "any signed-in identity";
  return level === "public" ? "none (public)" : LEVEL_ROLES[level].join(", ");
}

export function ruleKey(method: string, path: string): string {
  return `${method.toUpperCase()} ${path}`;
}

export function indexRules(rules: readonly AccessRule[]): Map<string, AccessRule> {
  const map = new Map<string, AccessRule>();
  for (const rule of rules) {
    const key = ruleKey(rule.method, rule.path);
    if (map.has(key)) throw new Error(`Access table lists ${key} twice`);
    map.set(key, rule);
  }
  return map;
}
