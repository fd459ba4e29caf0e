import type { Role } from "../config/schema.ts";
import type { AuditChange, AuditType } from "../domains/audit/types.ts";

/**
 * Who may call what: the one declarative table every request is checked against
 * (by `authorize` in middleware.ts) before any handler runs. A route registered in
 * the app but missing here makes start-up fail (`assertRoutesCovered`).
 *
 * Levels, each including the ones after it:
 *  - admin:  ACLs, quotas, users, audit and logs
 *  - write:  changes to topics, metadata, processors, connectors, schemas, alert settings
 *  - read:   reading record contents
 *  - nodata: everything else that is visible, but never record contents
 */
export type Level = "public" | "nodata" | "read" | "write" | "admin";

export const LEVEL_ROLES: Record<Exclude<Level, "public">, readonly Role[]> = {
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
  audit?: { type: AuditType; change: AuditChange };
}

const r = (method: AccessRule["method"], path: string, level: Level, summary: string, audit?: AccessRule["audit"]): AccessRule => ({
  method,
  path,
  level,
  summary,
  ...(audit ? { audit } : {}),
});

export const ACCESS_RULES: AccessRule[] = [
  // identity
  r("POST", "/api/login", "public", "Log in and receive a token"),
  r("GET", "/api/auth", "nodata", "The current session"),
  r("GET", "/api/logout", "public", "Revoke the presented token"),
  r("POST", "/api/logout", "public", "Revoke the presented token"),
  // service
  r("GET", "/api/health", "public", "Store and cluster connection status"),
  r("GET", "/api/openapi.json", "public", "OpenAPI 3.1 document of this API"),
  r("GET", "/api/docs", "public", "API reference page"),
  // audit and logs
  r("GET", "/api/audit", "admin", "Audit entries, newest first"),
  r("GET", "/api/sse/audit", "admin", "Live audit entries (event stream)"),
  r("GET", "/api/logs/INFO", "admin", "Latest 512 INFO log lines"),
  r("GET", "/api/logs/METRICS", "admin", "Latest 512 METRICS log lines"),
  // SQL over topic data: validating reveals no records; running and stopping queries reads them
  r("GET", "/api/sql/validation", "nodata", "Validate a query (always 200 with the result)"),
  r("GET", "/api/sql/data", "read", "Run a query: event stream, or one JSON answer"),
  r("GET", "/api/sql/queries", "read", "Running queries (all for admin, else your own)"),
  r("DELETE", "/api/sql/queries/:id", "read", "Stop a running query (your own; admin any)"),
  // topics, topic metadata, consumer groups, alert notifications and /metrics
  r("GET", "/api/topics", "nodata", "Topics with partitions, sizes and rates"),
  r("GET", "/api/topics/:topicName", "nodata", "One topic: partitions, offsets, configs, consumers and lag"),
  r("POST", "/api/topics", "write", "Create a topic", { type: "TOPIC", change: "ADD" }),
  r("DELETE", "/api/topics/:topicName", "write", "Delete a topic", { type: "TOPIC", change: "REMOVE" }),
  r("PUT", "/api/topics/config/:topicName", "write", "Change topic configs (validated first)", { type: "TOPIC", change: "UPDATE" }),
  // Audited by the service (TOPIC_DATA REMOVE): intent before answering, completed when the
  // background deletion ends.
  r("DELETE", "/api/topics/:topicName/:partition/:offset", "write", "Delete records up to an offset"),
  r("GET", "/api/metadata/topics", "nodata", "Stored key and value types of topics"),
  r("GET", "/api/metadata/topics/:topicName", "nodata", "Key and value types of a topic (stored or inferred)"),
  r("POST", "/api/metadata/topics/:topicName", "write", "Set key and value types of a topic", { type: "TOPIC_METADATA", change: "UPDATE" }),
  r("DELETE", "/api/metadata/topics/:topicName", "write", "Remove a topic's stored types", { type: "TOPIC_METADATA", change: "REMOVE" }),
  r("DELETE", "/api/system/topics/metadata/:topicName", "write", "Remove a topic's stored types", {
    type: "TOPIC_METADATA",
    change: "REMOVE",
  }),
  r("GET", "/api/consumers", "read", "Consumer groups with state, members, topics and lag"),
  r("GET", "/api/consumers/:group", "read", "One consumer group: members, offsets and lag"),
  r("PUT", "/api/consumers/:group/offsets", "write", "Reset a group's offsets (empty groups only)", {
    type: "CONSUMER_GROUP",
    change: "UPDATE",
  }),
  r("DELETE", "/api/consumers/:group", "write", "Delete a consumer group", { type: "CONSUMER_GROUP", change: "REMOVE" }),
  r("GET", "/api/alerts", "nodata", "Alert notifications, newest first"),
  r("GET", "/metrics", "public", "Prometheus metrics: consumer lag, process and HTTP figures"),
  // user interface
  r("GET", "/", "public", "Web UI"),
  r("GET", "/*", "public", "Web UI assets and client-side routes"),
];

export function rolesFor(level: Level): readonly Role[] | "public" {
  return level === "public" ? "public" : LEVEL_ROLES[level];
}

export function ruleKey(method: string, path: string): string {
  return `${method.toUpperCase()} ${path}`;
}

export function indexRules(rules: AccessRule[]): Map<string, AccessRule> {
  const map = new Map<string, AccessRule>();
  for (const rule of rules) {
    const key = ruleKey(rule.method, rule.path);
    if (map.has(key)) throw new Error(`Access table lists ${key} twice`);
    map.set(key, rule);
  }
  return map;
}

/** Compiles a route pattern (`/api/topics/:topicName`) for matching request paths (405 detection). */
export function patternRegex(path: string): RegExp {
  const body = path
    .split("/")
    .map((seg) => (seg.startsWith(":") ? "[^/]+" : seg === "*" ? ".*" : seg.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
    .join("/");
  return new RegExp(`^${body}/?$`);
}
