/**
 * Client-side paths (`/login`, `/`, `/topics`, `/topics/{name}`, `/sql`, `/processors[/new|/{id}]`, `/consumers`,
 * `/consumers/{group}`, `/redrives[/new|/{id}]`, `/alerts[?id=|/settings|/deliveries]`, `/audit`, `/logs`, `/users`, `/groups`,
 * `/service-accounts`, `/masking`): the URL is
 * the state, so every page is a link.
 * A tiny router over the History API: no library for what a hook and an event do.
 */
import { useSyncExternalStore } from "react";

const listeners = new Set<() => void>();
const notify = () => {
  for (const l of listeners) l();
};
window.addEventListener("popstate", notify);

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

const current = () => window.location.pathname + window.location.search;

/** The path and query string shown now; re-renders on navigation. */
export function useLocation(): string {
  return useSyncExternalStore(subscribe, current);
}

export function navigate(to: string, opts: { replace?: boolean } = {}): void {
  if (to === current()) return;
  if (opts.replace) window.history.replaceState(null, "", to);
  else window.history.pushState(null, "", to);
  notify();
}

/** Where the login page goes after signing in: the page asked for, never another site. */
export function nextPath(search: string): string {
  const next = new URLSearchParams(search).get("next");
  return next?.startsWith("/") && !next.startsWith("//") && !next.startsWith("/login") ? next : "/";
}

export function loginPathFor(location: string): string {
  return location === "/" || location.startsWith("/login") ? "/login" : `/login?next=${encodeURIComponent(location)}`;
}

/**
 * Replaces the page's query parameters with `changes` applied (null or "" removes one): a
 * page whose filters live in the URL changes them in place, without a history entry each key.
 */
export function replaceParams(path: string, params: URLSearchParams, changes: Record<string, string | null>): void {
  const next = new URLSearchParams(params);
  for (const [k, v] of Object.entries(changes))
    if (v === null || v === "") next.delete(k);
    else next.set(k, v);
  const query = next.toString();
  navigate(`${path}${query ? `?${query}` : ""}`, { replace: true });
}

/** A page under `base` (`/processors`, `/redrives`) by its path: `<base>/new`, `<base>/{id}`, else the list. */
export function subPageOf(path: string, base: string): { page: "list" } | { page: "new" } | { page: "detail"; id: string } {
  const rest = path.slice(base.length).replace(/^\/+|\/+$/g, "");
  if (rest === "") return { page: "list" };
  if (rest === "new") return { page: "new" };
  try {
    return { page: "detail", id: decodeURIComponent(rest) };
  } catch {
    return { page: "detail", id: rest };
  }
}
