import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "./context.ts";

/**
 * Sent on every answer: the UI, the API, errors, 404s and event streams. The UI loads only its
 * own files (no inline script, style or handler), so `'self'` is all the policy allows; no page
 * may frame Loupe (clickjacking), browsers must not guess content types, and no URL (which may
 * carry a token in its query) leaks to another site through the Referer header.
 */
const POLICY = "default-src 'self'; frame-ancestors 'none'; base-uri 'self'; form-action 'self'; object-src 'none'";

/**
 * The policy of an answer. A UI page adds a nonce of its own for style elements: the SQL
 * editor (CodeMirror) injects its styles as <style> elements, which carry that nonce, and
 * nothing else inline is allowed.
 */
export function contentSecurityPolicy(styleNonce?: string): string {
  return styleNonce ? `${POLICY}; style-src 'self' 'nonce-${styleNonce}'` : POLICY;
}

export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "Content-Security-Policy": POLICY,
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
  "X-Frame-Options": "DENY",
};

function setAll(headers: Headers): void {
  for (const [k, v] of Object.entries(SECURITY_HEADERS)) headers.set(k, v);
}

export const securityHeaders = (): MiddlewareHandler<AppEnv> => async (c, next) => {
  await next();
  try {
    setAll(c.res.headers);
  } catch {
    // Headers of a response passed through from fetch() are immutable: answer a copy.
    c.res = new Response(c.res.body, c.res);
    setAll(c.res.headers);
  }
  const nonce = c.get("styleNonce");
  if (nonce) c.res.headers.set("Content-Security-Policy", contentSecurityPolicy(nonce));
};
