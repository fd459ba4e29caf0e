/**
 * The Host check against DNS rebinding. A page on an attacker's site can point its own name at
 * an internal address (rebinding it after the page loaded); the browser then sends the page's
 * requests to Loupe as same-origin and lets the page read the answers: `/metrics` (public by
 * default) names every topic and consumer group, the UI and the API answer whoever has a token.
 * Such a request carries the attacker's name in Host, so every route (the UI, the API,
 * `/metrics`, event streams, websocket handshakes) answers 421 Misdirected Request before
 * anything else unless Host names this Loupe.
 *
 * Always accepted, whatever the configuration:
 * - IP addresses (`10.1.2.3`, `[::1]`): a page whose origin is an address is served by that
 *   address, so it cannot be the attacker's (as Vite and webpack-dev-server decide);
 * - `localhost` and `*.localhost` (loopback by RFC 6761, resolved so by browsers themselves);
 * - the listen host (`server.host`) when it is a name;
 * - this machine's host name and its first label (`kafka-tools-1.corp.example`, `kafka-tools-1`):
 *   names of this machine that an outside page cannot give another address.
 * Beyond those, `server.allowedHosts`: exact names, `.example.com` for the domain and every
 * subdomain, or `*` to turn the check off. The port of Host is not compared (a reverse proxy or
 * a port mapping changes it). X-Forwarded-Host never lets a request in; with
 * `server.checkForwardedHost` each name it carries must be allowed as well. A request without
 * Host is no browser's: checked on its URL's host when it has one (in-process requests), else
 * served (HTTP/1.0).
 */

import { isIP } from "node:net";
import { hostname } from "node:os";
import type { MiddlewareHandler } from "hono";
import { AppError } from "../errors.ts";
import type { AppEnv } from "./context.ts";

export interface HostCheckOptions {
  /** `server.host`: the address or name Loupe listens on. */
  listenHost: string;
  /** `server.allowedHosts`, lower case, without trailing dots. */
  allowedHosts: readonly string[];
  /** `server.checkForwardedHost`. */
  checkForwardedHost: boolean;
  /** This machine's host name (tests give their own). */
  machineName?: string;
}

/** The host part of a Host header (or of one X-Forwarded-Host entry): lower case, without port or trailing dot. */
export function hostOf(header: string): string {
  const value = header.trim().toLowerCase();
  if (value.startsWith("[")) {
    const end = value.indexOf("]");
    return end < 0 ? value : value.slice(0, end + 1);
  }
  const colon = value.lastIndexOf(":");
  const host = colon >= 0 && /^\d*$/.test(value.slice(colon + 1)) ? value.slice(0, colon) : value;
  return host.endsWith(".") ? host.slice(0, -1) : host;
}

/** Whether `host` (as hostOf gives it) may be served; null when the check is off. */
export function hostMatcher(opts: HostCheckOptions): ((host: string) => boolean) | null {
  if (opts.allowedHosts.includes("*")) return null;
  const exact = new Set<string>(["localhost"]);
  const suffixes: string[] = [".localhost"];
  // An address or a name, never with a port ("::1" is an address, not "host:port").
  const listen = opts.listenHost
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, "$1")
    .replace(/\.$/, "");
  if (listen !== "" && isIP(listen) === 0) exact.add(listen);
  const machine = hostOf(opts.machineName ?? hostname());
  if (machine !== "") {
    exact.add(machine);
    exact.add(machine.split(".")[0]!);
  }
  for (const entry of opts.allowedHosts) {
    if (entry.startsWith(".")) {
      suffixes.push(entry);
      exact.add(entry.slice(1));
    } else exact.add(entry);
  }
  return (host) => {
    if (host === "") return false;
    if (exact.has(host) || isIP(host) === 4) return true;
    if (host.startsWith("[") && host.endsWith("]")) return isIP(host.slice(1, -1)) === 6;
    return suffixes.some((s) => host.endsWith(s));
  };
}

/** The host of an absolute URL; undefined for the bare path of a request without Host (HTTP/1.0). */
function urlHost(url: string): string | undefined {
  try {
    return new URL(url).host;
  } catch {
    return undefined;
  }
}

const shown = (host: string) => (host.length > 100 ? `${host.slice(0, 100)}...` : host);

/** Answers 421 before anything else when the request's Host (or X-Forwarded-Host, when checked) is not this Loupe's. */
export function hostCheck(opts: HostCheckOptions): MiddlewareHandler<AppEnv> {
  const allowed = hostMatcher(opts);
  return async (c, next) => {
    if (allowed) {
      const header = c.req.header("host") ?? urlHost(c.req.url);
      const refuse = (name: string, via: string) => {
        throw new AppError(
          "MISDIRECTED_REQUEST",
          `${via} '${shown(name)}' is not a name of this Loupe: add it to server.allowedHosts (LOUPE_ALLOWED_HOSTS) to serve it`,
        );
      };
      if (header !== undefined && !allowed(hostOf(header))) refuse(hostOf(header), "Host");
      const forwarded = opts.checkForwardedHost ? c.req.header("x-forwarded-host") : undefined;
      if (forwarded !== undefined) {
        for (const entry of forwarded.split(",")) {
          const name = hostOf(entry);
          if (!allowed(name)) refuse(name, "X-Forwarded-Host");
        }
      }
    }
    await next();
  };
}
