import { z } from "zod";
import { clusterOf } from "../../http/context.ts";
import { requestToken } from "../../http/middleware.ts";
import { defineRoute, RouteGroup } from "../../http/route.ts";
import { switchingProtocols, upgradeSocket } from "../../http/websocket.ts";
import type { LiveConnection, LiveDeps } from "./connection.ts";
import { LiveHub } from "./connection.ts";

export const liveApi = {
  // Public: the socket's own LOGIN request is how the Go and Python clients authenticate; every
  // other request is checked with its token (see connection.ts).
  socket: defineRoute({
    method: "GET",
    path: "/api/kafka/ws/{clientId}",
    level: "public",
    summary: "Live subscriptions, publishing and commits over a websocket",
    tags: ["live"],
    request: { params: z.object({ clientId: z.string().min(1).max(255) }) },
    responses: switchingProtocols(
      "Requests `{type: LOGIN|SUBSCRIBE|UNSUBSCRIBE|PUBLISH|COMMIT, correlationId, content: <JSON text>, authToken}`; " +
        "answers `{type: SUCCESS|ERROR|INVALIDREQUEST|KAFKAMSG, correlationId, content}`, one per request. SUBSCRIBE needs read, " +
        "PUBLISH write (audited TOPIC_DATA INSERT), COMMIT write (audited CONSUMER_GROUP UPDATE of the group named clientId).",
    ),
  }),
};

/** The peer's address, for login throttling: the socket's, never a header. */
function peer(c: import("hono").Context<import("../../http/context.ts").AppEnv>): string {
  try {
    return c.env?.server?.requestIP(c.req.raw)?.address ?? "local";
  } catch {
    return "local";
  }
}

export function liveRoutes(deps: LiveDeps) {
  const app = new RouteGroup();
  const hub = new LiveHub(deps);

  app.handle(liveApi.socket, (c) => {
    const { clientId } = c.req.valid("param");
    const token = requestToken(c)?.replace(/^"(.*)"$/, "$1");
    const info = {
      clientId,
      cluster: clusterOf(c),
      address: peer(c),
      path: liveApi.socket.access.path,
      ...(token ? { handshakeToken: token } : {}),
    };
    let conn: LiveConnection | undefined;
    return upgradeSocket(c, {
      open: (socket) => {
        conn = hub.connect(socket, info);
      },
      message: (_socket, text) => conn?.message(text),
      close: () => conn?.close(),
    });
  });

  return app;
}
