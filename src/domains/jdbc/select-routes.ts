import { z } from "zod";
import { clusterOf } from "../../http/context.ts";
import { defineRoute, RouteGroup } from "../../http/route.ts";
import type { StreamRegistry } from "../../http/sse.ts";
import { type Socket, switchingProtocols, upgradeSocket } from "../../http/websocket.ts";
import { viewerOf } from "../sql/service.ts";
import { topicCheck } from "../sql/topic-check.ts";
import { type JdbcSelectDeps, runJdbcSelect } from "./select.ts";

export const jdbcSelectApi = {
  // The token comes with the handshake: a missing or refused one fails the handshake (401/403),
  // which the driver answers by logging in again once.
  data: defineRoute({
    method: "GET",
    path: "/api/ws/jdbc/data",
    level: "read",
    summary: "Run a query for the JDBC driver over a websocket",
    tags: ["jdbc"],
    request: { query: z.object({ sql: z.string({ error: "the query parameter sql is required" }).min(1, "the query is empty") }) },
    responses: switchingProtocols(
      "Text frames, the first character their type: `2` and the result's Avro RECORD schema (first), `0` and a row " +
        "(a flat JSON object in the schema's field order), `1` and an error message (last), `3` at the end.",
    ),
  }),
};

export function jdbcSelectRoutes(deps: JdbcSelectDeps & { streams: StreamRegistry }) {
  const app = new RouteGroup();

  app.handle(jdbcSelectApi.data, async (c) => {
    const { sql } = c.req.valid("query");
    const session = c.get("session")!;
    const user = session.user.name;
    const cluster = clusterOf(c);
    // Settled at the handshake, with the session that opened the socket.
    const allowed = topicCheck(session.scope, cluster, "run");
    const abort = new AbortController();
    let open: Socket | undefined;
    // Counted against the user's open streams (429 instead of the handshake), and ended with an
    // error frame when the token stops working or the identity's access changes.
    const release = deps.streams.acquire(user, c, (err) => {
      open?.send(`1${err instanceof Error ? err.message : "The query was stopped"}`);
      abort.abort();
      open?.close(1000, "done");
    });
    let released = false;
    const done = () => {
      if (released) return;
      released = true;
      release();
    };
    let opened = false;
    try {
      return await upgradeSocket(c, {
        open: (socket) => {
          opened = true;
          open = socket;
          void runJdbcSelect(
            deps,
            { sql, cluster, viewer: viewerOf(session, cluster), ...(allowed ? { allowed } : {}) },
            socket,
            abort.signal,
          ).finally(done);
        },
        close: () => {
          abort.abort();
          if (!opened) done();
        },
      });
    } catch (err) {
      done();
      throw err;
    }
  });

  return app;
}
