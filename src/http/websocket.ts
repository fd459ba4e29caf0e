/**
 * Websockets on Bun through Hono: a declared route upgrades its request with `upgradeSocket`
 * (Hono's Bun helper), and Bun.serve gets `websocket` as its handler. What Hono's helper leaves
 * out is added here: sends that report backpressure, a wait for the socket to drain, and the
 * bounds of a frame.
 *
 * A route upgrades after its guard ran: the handshake is authenticated, authorised and audited
 * like any other request, and answers 401/403 (which clients take as a failed handshake).
 */

import type { ServerWebSocket, WebSocketHandler } from "bun";
import type { Context } from "hono";
import { type BunWebSocketData, websocket as honoWebsocket, upgradeWebSocket } from "hono/bun";
import { AppError } from "../errors.ts";
import type { AppEnv } from "./context.ts";

/** Most bytes of one frame a client may send; Bun closes the socket (1009) on a larger one. */
export const MAX_CLIENT_FRAME_BYTES = 1024 * 1024;
/** Bytes waiting for a slow client above which a producer stops producing until the socket drains. */
export const SOCKET_HIGH_WATER_BYTES = 1024 * 1024;

/** One open socket as its owner sees it. */
export interface Socket {
  /**
   * Sends a text frame. False when the socket is closed (the frame is dropped); otherwise the
   * frame is queued, and `wouldBlock()` says whether the producer should wait (`drained()`).
   */
  send(text: string): boolean;
  /** True while more than SOCKET_HIGH_WATER_BYTES wait for the client. */
  wouldBlock(): boolean;
  /**
   * Resolves at once when no more than SOCKET_HIGH_WATER_BYTES wait for the client (or the socket
   * is closed), else when the socket next drains: wait in a loop while wouldBlock() holds.
   */
  drained(): Promise<void>;
  readonly closed: boolean;
  close(code?: number, reason?: string): void;
}

/** What the owner of a socket is told. Text frames only: a binary frame is given as text. */
export interface SocketHandlers {
  open?(socket: Socket): void;
  message?(socket: Socket, text: string): void;
  close?(code: number, reason: string): void;
}

type Raw = ServerWebSocket<BunWebSocketData>;

/** The sockets' waiters for a drain, by socket. */
const waiters = new WeakMap<Raw, Array<() => void>>();
const closedSockets = new WeakSet<Raw>();
const sockets = new WeakMap<Raw, Socket>();

function wake(raw: Raw): void {
  const list = waiters.get(raw);
  if (!list) return;
  waiters.delete(raw);
  for (const w of list) w();
}

function socketOf(raw: Raw): Socket {
  let s = sockets.get(raw);
  if (s) return s;
  s = {
    send(text) {
      if (closedSockets.has(raw)) return false;
      // 0: dropped (closed); -1: queued behind backpressure; otherwise the bytes sent.
      return raw.sendText(text) !== 0;
    },
    wouldBlock: () => !closedSockets.has(raw) && raw.getBufferedAmount() > SOCKET_HIGH_WATER_BYTES,
    drained() {
      if (closedSockets.has(raw) || raw.getBufferedAmount() <= SOCKET_HIGH_WATER_BYTES) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const list = waiters.get(raw) ?? [];
        list.push(resolve);
        waiters.set(raw, list);
      });
    },
    get closed() {
      return closedSockets.has(raw);
    },
    close(code, reason) {
      if (!closedSockets.has(raw)) raw.close(code, reason);
    },
  };
  sockets.set(raw, s);
  return s;
}

const decoder = new TextDecoder();

/**
 * Upgrades the request to a websocket served by `handlers`. A request that is no websocket
 * handshake gets 426 with the COMPAT body.
 */
export async function upgradeSocket(c: Context<AppEnv>, handlers: SocketHandlers): Promise<Response> {
  if (c.req.header("upgrade")?.toLowerCase() !== "websocket")
    throw new AppError("BAD_REQUEST", `${c.req.path} is a websocket: send a websocket handshake (Upgrade: websocket)`, {
      status: 426,
      headers: { Upgrade: "websocket" },
    });
  if (!c.env?.server) throw new AppError("INTERNAL", "websockets need the Bun server");
  return upgradeWebSocket(c, {
    onOpen: (_e, ws) => handlers.open?.(socketOf(ws.raw as Raw)),
    onMessage: (e, ws) => {
      const data = e.data;
      const text = typeof data === "string" ? data : data instanceof ArrayBuffer ? decoder.decode(data) : String(data);
      handlers.message?.(socketOf(ws.raw as Raw), text);
    },
    onClose: (e, ws) => {
      const raw = ws.raw as Raw;
      closedSockets.add(raw);
      wake(raw);
      handlers.close?.(e.code, e.reason);
    },
  });
}

/**
 * The handler Bun.serve needs for the sockets `upgradeSocket` opens: Hono's, plus the drain
 * that wakes producers waiting for a slow client, and the frame bound.
 */
export const websocket: WebSocketHandler<BunWebSocketData> = {
  open: (ws) => honoWebsocket.open(ws),
  message: (ws, message) => honoWebsocket.message(ws, typeof message === "string" ? message : message.toString("utf8")),
  close: (ws, code, reason) => honoWebsocket.close(ws, code, reason),
  // Producers look at wouldBlock() again when woken, and wait again while it holds.
  drain: (ws) => wake(ws),
  maxPayloadLength: MAX_CLIENT_FRAME_BYTES,
  // Bun pings idle sockets and closes those that stop answering.
  idleTimeout: 120,
  sendPings: true,
};

/** The OpenAPI answer of a websocket route. */
export const switchingProtocols = (description: string) => ({ 101: { description: `Switching Protocols (websocket). ${description}` } });
