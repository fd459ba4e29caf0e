/**
 * Loupe's own port, over plain HTTP or HTTPS, and the optional plain HTTP port that only
 * redirects to it.
 *
 * Reloading the certificate: Bun 1.4.5's `server.reload({ tls })` keeps serving the first
 * certificate (measured: new handshakes still got the old one), so a reload starts a second
 * listener on the same port (SO_REUSEPORT) with the new files and stops the first one from
 * accepting: connections it holds (event streams, websockets) go on until they end, every new
 * connection gets the new certificate. TLS 1.0 and 1.1 are refused by Bun's TLS stack (measured
 * with `openssl s_client -tls1_1`: protocol version alert); 1.2 and 1.3 are served.
 */
import { readFileSync } from "node:fs";
import type { Server, WebSocketHandler } from "bun";
import { ConfigError } from "../config/load.ts";
import type { Config } from "../config/schema.ts";

type TlsConfig = NonNullable<Config["server"]["tls"]>;
// biome-ignore lint/suspicious/noExplicitAny: the websocket data type is the handler's own.
type AnyServer = Server<any>;

export interface ListenOptions {
  host: string;
  port: number;
  bodyLimit: number;
  tls?: TlsConfig;
  fetch: (req: Request, server: AnyServer) => Response | Promise<Response> | undefined | Promise<Response | undefined>;
  // biome-ignore lint/suspicious/noExplicitAny: as Bun.serve takes it.
  websocket: WebSocketHandler<any>;
}

export interface Listener {
  url: URL;
  /** The URL of the redirecting HTTP listener, when there is one. */
  redirectUrl?: URL;
  /**
   * Reads the certificate and key files again and serves them to new connections; open ones keep
   * theirs. A file that cannot be read or used leaves the current certificate in place (thrown).
   */
  reloadTls(): void;
  /** Stops every listener; `force` closes the open connections too. */
  stop(force: boolean): Promise<void>;
}

/** The PEM texts of `tls`, or a ConfigError naming the file that cannot be read. */
export function readTlsFiles(tls: TlsConfig): { cert: string; key: string } {
  const read = (what: string, file: string) => {
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch (e) {
      throw new ConfigError(`server.tls.${what}: cannot read ${file}: ${e instanceof Error ? e.message : String(e)}`);
    }
    if (!text.includes("-----BEGIN ")) throw new ConfigError(`server.tls.${what}: ${file} holds no PEM block`);
    return text;
  };
  return { cert: read("cert", tls.cert), key: read("key", tls.key) };
}

/** The Strict-Transport-Security value for a max-age in milliseconds, or none for 0. */
export function hstsValue(maxAgeMs: number): string | null {
  return maxAgeMs > 0 ? `max-age=${Math.floor(maxAgeMs / 1000)}` : null;
}

function withHeader(res: Response, name: string, value: string): Response {
  try {
    res.headers.set(name, value);
    return res;
  } catch {
    // Headers of a response passed through from fetch() are immutable: answer a copy.
    const copy = new Response(res.body, res);
    copy.headers.set(name, value);
    return copy;
  }
}

/** Where a plain HTTP request is sent: the same host name, path and query, on the HTTPS port. */
export function redirectLocation(req: Request, httpsPort: number): string {
  const url = new URL(req.url);
  const port = httpsPort === 443 ? "" : `:${httpsPort}`;
  const host = url.hostname.includes(":") && !url.hostname.startsWith("[") ? `[${url.hostname}]` : url.hostname;
  return `https://${host}${port}${url.pathname}${url.search}`;
}

export function listen(opts: ListenOptions): Listener {
  const hsts = opts.tls ? hstsValue(opts.tls.hstsMaxAge) : null;
  const fetch = hsts
    ? async (req: Request, srv: AnyServer) => {
        const res = await opts.fetch(req, srv);
        return res ? withHeader(res, "Strict-Transport-Security", hsts) : res;
      }
    : opts.fetch;
  const start = (port: number) =>
    Bun.serve({
      hostname: opts.host,
      port,
      idleTimeout: 30,
      maxRequestBodySize: opts.bodyLimit + 1024,
      // A reload binds a second listener to this port before the first stops accepting.
      reusePort: opts.tls !== undefined,
      ...(opts.tls ? { tls: readTlsFiles(opts.tls) } : {}),
      // biome-ignore lint/suspicious/noExplicitAny: undefined is how Bun learns a websocket took the request.
      fetch: fetch as any,
      websocket: opts.websocket,
    });
  let current = start(opts.port);
  /** Listeners replaced by a reload: they accept nothing, and serve the connections they hold. */
  const draining = new Set<AnyServer>();
  const tls = opts.tls;
  const redirect =
    tls?.redirectPort !== undefined
      ? Bun.serve({
          hostname: opts.host,
          port: tls.redirectPort,
          idleTimeout: 10,
          maxRequestBodySize: opts.bodyLimit + 1024,
          fetch: (req) => new Response(null, { status: 308, headers: { location: redirectLocation(req, current.port ?? opts.port) } }),
        })
      : undefined;
  return {
    url: current.url,
    redirectUrl: redirect?.url,
    reloadTls() {
      if (!tls) return;
      const next = start(current.port ?? opts.port);
      const old = current;
      current = next;
      draining.add(old);
      void old.stop(false).then(() => draining.delete(old));
    },
    async stop(force) {
      await Promise.all([current, ...draining, ...(redirect ? [redirect] : [])].map((s) => s.stop(force)));
    },
  };
}
