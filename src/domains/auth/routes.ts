import { z } from "zod";
import { AppError } from "../../errors.ts";
import type { AppEnv } from "../../http/context.ts";
import { requestToken, unquoteToken } from "../../http/middleware.ts";
import { defineRoute, json, RouteGroup } from "../../http/route.ts";
import { loginAnswer, loginBody, sessionAnswer } from "./schemas.ts";
import type { AuthService, Session } from "./service.ts";

/**
 * Whether the registry proxy's deletes are open to the session: turned on in the configuration,
 * and `write` or `admin` on the request's cluster (the level of the delete routes).
 */
const canDeleteSchemas = (allowDelete: boolean, s: Session, cluster: string) =>
  allowDelete && s.scope.clusterRoles(cluster).some((r) => r === "admin" || r === "write");

/** Client address for throttling: the socket's peer, never a header a client can forge. */
export function clientAddress(c: import("hono").Context<AppEnv>): string {
  try {
    return c.env?.server?.requestIP(c.req.raw)?.address ?? "local";
  } catch {
    return "local";
  }
}

const tags = ["auth"];
const logoutAnswer = json(z.object({ success: z.boolean() }), "Whether the token was revoked");
/** What a logout accepts besides the header: see the handler. */
const logoutQuery = z.object({ token: z.string().optional() });

export const authApi = {
  login: defineRoute({
    method: "POST",
    path: "/api/login",
    level: "public",
    summary: "Log in and receive a token",
    tags,
    request: { body: loginBody },
    responses: {
      200: {
        description:
          "The session as JSON when Accept names application/json; otherwise (no Accept, `*/*`, text/plain) the bare token, unquoted, as text/plain",
        content: { "application/json": { schema: loginAnswer }, "text/plain": { schema: { type: "string" } } },
      },
    },
  }),
  session: defineRoute({
    method: "GET",
    path: "/api/auth",
    level: "session",
    summary: "The current session",
    tags,
    responses: { 200: json(sessionAnswer) },
  }),
  logoutGet: defineRoute({
    method: "GET",
    path: "/api/logout",
    level: "public",
    summary: "Revoke the presented token",
    tags,
    request: { query: logoutQuery },
    responses: { 200: logoutAnswer },
  }),
  logoutPost: defineRoute({
    method: "POST",
    path: "/api/logout",
    level: "public",
    summary: "Revoke the presented token",
    tags,
    responses: { 200: logoutAnswer },
  }),
};

export function authRoutes(auth: AuthService, schemaDeletes = false) {
  const app = new RouteGroup();

  app.handle(authApi.login, async (c) => {
    const body = c.req.valid("json");
    const { token, session } = await auth.login(body.user, body.password, clientAddress(c));
    // The clients use the whole body as their token and none asks for JSON (the Go client sends
    // no Accept at all): the object only for those that name application/json.
    if (!/application\/json/i.test(c.req.header("accept") ?? "")) return c.text(token);
    return c.json({
      success: true,
      token,
      user: session.user,
      schemaRegistryDelete: canDeleteSchemas(schemaDeletes, session, c.get("cluster")),
    });
  });

  app.handle(authApi.session, (c) => {
    const session = c.get("session")!;
    return c.json({
      token: requestToken(c)!,
      user: session.user.name,
      userInfo: session.user,
      roles: session.user.roles,
      administrator: session.scope.unrestricted.has("admin"),
      // What the UI offers on the cluster shown: the same roles the routes are checked against.
      clusterRoles: session.scope.clusterRoles(c.get("cluster")),
      everyTopic: session.scope.everyTopic(c.get("cluster"), undefined, "metadata"),
      schemaRegistryDelete: canDeleteSchemas(schemaDeletes, session, c.get("cluster")),
      expiresAt: session.expiresAt,
    });
  });

  // Logout revokes the token of the header. Clients also send it as ?token=, which is accepted only
  // beside the same token in the header: a link alone (a query string ends up in logs, histories
  // and Referer headers) must not log anyone out.
  const logout = async (c: import("hono").Context<AppEnv>) => {
    const token = requestToken(c);
    const given = c.req.query("token");
    const queryToken = given === undefined ? undefined : unquoteToken(given);
    if (queryToken !== undefined && queryToken !== token)
      throw new AppError("BAD_REQUEST", "?token= is accepted only with the same token in the x-service-token header");
    if (!token) throw new AppError("BAD_REQUEST", "No token to revoke");
    const revoked = await auth.logout(token);
    return c.json({ success: revoked }, 200);
  };
  app.handle(authApi.logoutGet, logout);
  app.handle(authApi.logoutPost, logout);
  return app;
}
