import type { Context } from "hono";
import type { Session } from "../domains/auth/service.ts";
import type { AccessRule } from "./access.ts";
import type { Guard } from "./route.ts";

/** Values middleware puts on the request context. */
export interface AppVariables {
  requestId: string;
  /** The cluster an /api request acts on: `x-service-cluster`, else the default. */
  cluster: string;
  session: Session | undefined;
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
