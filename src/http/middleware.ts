import type { Context, MiddlewareHandler, Next } from "hono";
import { AppError } from "../errors.ts";
import type { Logger } from "../log/logger.ts";
import { parseJson } from "../util/json.ts";
import { type AccessRule, type AccessScope, heldRoles, levelAllows } from "./access.ts";
import type { AuditTrail } from "./audit-trail.ts";
import type { AppEnv, AppSession, Guard } from "./context.ts";

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Keeps a caller's request id when it is sane, otherwise makes one; echoes it on every answer. */
export const requestId = (): MiddlewareHandler<AppEnv> => async (c, next) => {
  const given = c.req.header("x-request-id");
  const id = given && REQUEST_ID.test(given) ? given : crypto.randomUUID();
  c.set("requestId", id);
  c.header("x-request-id", id);
  await next();
};

export interface HttpCounters {
  requests: number;
  errors: number;
  totalMs: number;
}

/** One access log line per request. Only the path is logged: query strings may hold secrets. */
export const accessLog =
  (log: Logger, counters: HttpCounters): MiddlewareHandler<AppEnv> =>
  async (c, next) => {
    const started = performance.now();
    await next();
    const ms = performance.now() - started;
    counters.requests++;
    counters.totalMs += ms;
    if (c.res.status >= 500) counters.errors++;
    log.info("request", {
      requestId: c.get("requestId"),
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      ms: Math.round(ms * 10) / 10,
      user: c.get("session")?.user.name,
    });
  };

/**
 * A token header value without one pair of surrounding double quotes: a client that kept a
 * JSON-quoted login answer sends the token back quoted.
 */
export function unquoteToken(value: string): string {
  const v = value.trim();
  return v.length >= 2 && v.startsWith('"') && v.endsWith('"') ? v.slice(1, -1).trim() : v;
}

/**
 * The token of a request: `x-service-token`, else `Authorization: Bearer`. Never from the query
 * string. Any other Authorization scheme (a Kerberos client adds `Negotiate ...` to every
 * request) is not a token and is ignored, so it neither replaces nor spoils the token header.
 */
export function requestToken(c: Context): string | undefined {
  const header = c.req.header("x-service-token");
  const token = header === undefined ? "" : unquoteToken(header);
  if (token) return token;
  const bearer = /^bearer\s+(.+)$/i.exec(c.req.header("authorization")?.trim() ?? "");
  return (bearer && unquoteToken(bearer[1]!)) || undefined;
}

/**
 * What the caller sent (query parameters and a JSON object body), for the intent of an audited
 * change: if Loupe stops before the handler names what it acted on, the entry still tells what
 * was attempted (the topic of a creation is in the body, not the path). The body is read as
 * text, which Hono keeps for the handler.
 */
async function requestFields(c: Context): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = { ...c.req.query() };
  // A binary body (a descriptor set) is not read here: Hono would hand the handler its text, not its bytes.
  if (c.req.raw.body === null || /^application\/octet-stream\b/i.test(c.req.header("content-type") ?? "")) return out;
  const text = await c.req.text();
  try {
    // Bounded: the audit walks the fields it keeps, and a deep body would overflow the stack there.
    const body: unknown = parseJson(text);
    if (body && typeof body === "object" && !Array.isArray(body)) Object.assign(out, body);
  } catch {
    /* not JSON (or nested too deeply): the handler answers that; the intent keeps the path and the query */
  }
  return out;
}

/**
 * Why the identity may not call the route, or undefined when it may: the roles its groups grant
 * on the cluster (the admin level: only groups without limits), then, for a route naming a
 * topic, the roles on that topic.
 */
function denied(
  rule: AccessRule,
  scope: AccessScope,
  cluster: string,
  params: Record<string, string>,
): { message: string; audit: string } | undefined {
  if (rule.level === "public" || rule.level === "session") return undefined;
  if (!levelAllows(rule.level, scope, cluster)) {
    const roles =
      rule.level === "admin" && scope.clusterRoles(cluster).includes("admin")
        ? "admin (limited to some clusters or topics)"
        : heldRoles(rule.level, scope, cluster).join(",") || "none";
    return { message: `Role ${roles} may not ${rule.method} ${rule.path}`, audit: "role does not allow this action" };
  }
  const topic = params.topicName ?? params.topic;
  const refused = topic === undefined ? undefined : scope.refusal(cluster, topic, rule.level);
  if (refused) return { message: refused, audit: "topic outside the identity's scope" };
  return undefined;
}

const reasonOf = (e: unknown) => (e instanceof AppError ? `${e.code}: ${e.message}` : "INTERNAL: unexpected error");

/**
 * Authentication, the role check and the audit entry, driven by the access rule of the route
 * being served. Runs as the first route-level middleware of every route (see `guarded` in
 * route.ts), before validation and the handler; `afterChecks` runs after the checks (the app's
 * cluster selection), inside the audited part.
 *
 * Every denial is audited (as the route's type and change, or ACCESS DENY for a route that
 * changes nothing) and still answers 403 when the entry cannot be stored. An audited change
 * is recorded before it is acknowledged: the intent is stored first (503 before the handler
 * runs when it cannot be, so Kafka is never touched), then the handler makes the change, then
 * the entry is completed with the outcome.
 */
export const authorize =
  (deps: {
    /** The session of a token (the auth area's service), undefined when it is not valid. */
    auth: { authenticate(token: string): Promise<AppSession | undefined> };
    audit: AuditTrail;
    /** The cluster the request acts on (`x-service-cluster`, else the default); throws for an unknown one. */
    selectCluster?: (rule: AccessRule, c: Context<AppEnv>) => string;
    afterChecks?: (rule: AccessRule, c: Context<AppEnv>, next: Next) => Promise<void>;
  }): Guard =>
  async (rule, c, next) => {
    c.set("rule", rule);
    const proceed = () => (deps.afterChecks ? deps.afterChecks(rule, c, next) : next());
    if (rule.level === "public") {
      deps.selectCluster?.(rule, c);
      await proceed();
      return;
    }

    const token = requestToken(c);
    const session = token ? await deps.auth.authenticate(token) : undefined;
    if (!session) throw new AppError("UNAUTHORIZED", token ? "Token is invalid or expired" : "Authentication required");
    c.set("session", session);
    const user = session.user.name;
    // Hono's path parameters of this route, decoded once (a group named "a%41" stays "a%41").
    const params = c.req.param() as Record<string, string>;
    // Chosen before the role check: the roles that apply are those the groups grant on it.
    const cluster = deps.selectCluster?.(rule, c) ?? "";

    const denial = denied(rule, session.scope, cluster, params);
    if (denial) {
      const failure = `FORBIDDEN: ${denial.audit}`;
      // The path as sent: c.req.path is partly decoded already.
      const rawPath = new URL(c.req.url).pathname;
      // record() logs a failure to store and never throws: the answer stays 403.
      await deps.audit.record(
        rule.audit
          ? { type: rule.audit.type, change: rule.audit.change, user, content: params, failure }
          : { type: "ACCESS", change: "DENY", user, content: { ...params, method: c.req.method, path: rawPath }, failure },
      );
      throw new AppError("FORBIDDEN", denial.message);
    }
    if (!rule.audit) {
      await proceed();
      return;
    }

    // Throws UNAVAILABLE when the intent cannot be stored: the handler never runs.
    const pending = await deps.audit.begin({
      type: rule.audit.type,
      change: rule.audit.change,
      user,
      content: params,
      request: rule.audit.request ? rule.audit.request(await requestFields(c)) : await requestFields(c),
    });
    let failure: string | undefined;
    try {
      await proceed();
      // Hono turns thrown errors into responses before we see them; read the outcome from the status.
      if (c.error) failure = reasonOf(c.error);
      else if (c.res.status >= 400) failure = `HTTP ${c.res.status}`;
    } catch (e) {
      failure = reasonOf(e);
      throw e;
    } finally {
      const content = c.get("auditContent");
      await pending.complete({ ...(content ? { content } : {}), ...(failure !== undefined ? { failure } : {}) });
    }
  };
