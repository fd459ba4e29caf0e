import type { Context } from "hono";
import { forbidden } from "../errors.ts";
import type { AuditTrail } from "./audit-trail.ts";
import { type AppEnv, userOf } from "./context.ts";

/**
 * A handler's own refusal, past the route's role check (a subject or topic outside the scope,
 * a guard rail): 403 with `message`, audited as the guard audits a denial. `content` joins the
 * request's audit content: on an audited route the guard completes its entry as a failure with
 * it (from the status); on a route that changes nothing the refusal is recorded here as ACCESS
 * DENY, with the method and the path as sent.
 */
export async function refuse(c: Context<AppEnv>, audit: AuditTrail, message: string, content: Record<string, unknown>): Promise<never> {
  const all = { ...(c.get("auditContent") ?? {}), ...content };
  c.set("auditContent", all);
  if (!c.get("rule")?.audit)
    await audit.record({
      type: "ACCESS",
      change: "DENY",
      user: userOf(c),
      content: { ...all, method: c.req.method, path: new URL(c.req.url).pathname },
      failure: `FORBIDDEN: ${message}`,
    });
  throw forbidden(message);
}
