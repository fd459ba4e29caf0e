import type { Context, Next } from "hono";
import type { AccessRule, AccessScope } from "./access.ts";

/**
 * The signed-in identity as http reads it: its name, its token (by hash) and its rights. A port:
 * the auth area's session fills it and names its own type in `SessionTypes`, so that handlers
 * get the whole of it from `c.get("session")`.
 */
export interface RequestSession {
  user: { name: string };
  tokenHash: string;
  scope: AccessScope;
}

/**
 * Filled by the auth area (`declare module` beside its Session) with `session: Session`, as
 * Hono's ContextVariableMap is: http stays free of the domain's type, the handlers keep it.
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled by declaration merging
export interface SessionTypes {}

/** The session on the request context: the auth area's type when it has named one. */
export type AppSession = SessionTypes extends { session: infer S extends RequestSession } ? S : RequestSession;

/**
 * Authentication, the role check and the audit of one route, given its rule (see
 * `authorize` in middleware.ts). Put on the request context by the app, so that a route
 * cannot be served without it: a route served without a guard on the context is a 500.
 */
export type Guard = (rule: AccessRule, c: Context<AppEnv>, next: Next) => Promise<Response | void>;

/** Values middleware puts on the request context. */
export interface AppVariables {
  requestId: string;
  /** The cluster an /api request acts on: `x-service-cluster`, else the default. */
  cluster: string;
  session: AppSession | undefined;
  /** The rule of the route being served, set by its guard. */
  rule: AccessRule | undefined;
  /** The app's access check, which every declared route runs first (see `guarded`). */
  guard: Guard | undefined;
  /** Extra audit content a handler adds for the automatic audit entry. */
  auditContent: Record<string, unknown> | undefined;
  /** A UI page's nonce for the style elements its editor injects (see contentSecurityPolicy). */
  styleNonce: string | undefined;
}

export type AppEnv = { Variables: AppVariables; Bindings: { server?: import("bun").Server<unknown> } };

/** The cluster a request acts on (set by the app's middleware from `x-service-cluster`, checked against the config). */
export function clusterOf(c: Context<AppEnv>): string {
  return c.get("cluster");
}

/** The caller's user name, for audit entries written after the request. */
export function userOf(c: Context<AppEnv>): string {
  return c.get("session")?.user.name ?? "anonymous";
}
