/**
 * The signed-in session: its token lives in memory and in sessionStorage (one tab, gone when
 * it closes), never in a URL. Every API call goes through `api`, which sends the token and, on
 * a 401, forgets the session and returns to the login page, then back to the same page.
 */

import { createContext, useContext } from "react";
import type { LoginAnswer, SessionAnswer } from "../src/domains/auth/schemas.ts";
import { clusterOf } from "./cluster.ts";
import { loginPathFor, navigate } from "./router.ts";

const KEY = "loupe.token";

export interface SessionUser {
  name: string;
  roles: string[];
  /** The groups the identity's rights come from ([] when the server names none). */
  groups: string[];
  /** How it signed in: only a local user has a password Loupe can change. */
  kind: "local" | "ldap" | "service";
  /** Holds admin without limits: may manage users, groups, service accounts, audit and logs. */
  administrator: boolean;
  /** The roles its groups grant on the cluster shown, highest first ([] when none). */
  clusterRoles: string[];
  /** Whether it sees every topic of that cluster (false when its groups limit it to some). */
  everyTopic: boolean;
}

/**
 * What a page may offer, as the API's levels: `nodata` sees the cluster but no record,
 * `read` adds records, `write` adds changes, `admin` is Loupe's administration (users, groups,
 * service accounts, audit, logs), which needs admin without limits.
 */
export type Level = "nodata" | "read" | "write" | "admin";

const LEVEL_ROLES: Record<Exclude<Level, "admin">, string[]> = {
  nodata: ["admin", "write", "read", "nodata"],
  read: ["admin", "write", "read"],
  write: ["admin", "write"],
};

/** Whether the user holds `level` on the cluster shown (the server checks every call all the same). */
export function can(user: SessionUser | null, level: Level): boolean {
  if (!user) return false;
  if (level === "admin") return user.administrator;
  return user.clusterRoles.some((r) => LEVEL_ROLES[level].includes(r));
}

/** The signed-in user, for any page below the shell (null while it is being asked). */
export const ViewerContext = createContext<SessionUser | null>(null);

export function useViewer(): SessionUser | null {
  return useContext(ViewerContext);
}

/** Whether the signed-in user may use what needs `level` on the cluster shown: pages offer only that. */
export function useCan(level: Level): boolean {
  return can(useViewer(), level);
}

let token: string | null = sessionStorage.getItem(KEY);

export const hasToken = () => token !== null;

const sessionListeners = new Set<() => void>();

/** Called whenever the session starts or ends (login, logout, a 401); returns the unsubscribe. */
export function onSessionChange(listener: () => void): () => void {
  sessionListeners.add(listener);
  return () => sessionListeners.delete(listener);
}

export function setToken(value: string | null): void {
  token = value;
  if (value === null) sessionStorage.removeItem(KEY);
  else sessionStorage.setItem(KEY, value);
  for (const listener of sessionListeners) listener();
}

/** An error answer of the API (COMPAT's body), with its message to show where the user acted. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

async function messageOf(res: Response): Promise<string> {
  try {
    const body = (await res.json()) as { message?: unknown };
    if (typeof body.message === "string") return body.message;
  } catch {
    /* not JSON */
  }
  return `${res.status} ${res.statusText}`;
}

/** The session's token and the cluster shown, as request headers. */
export function authHeaders(cluster: string | null, init?: HeadersInit): Headers {
  const headers = new Headers(init);
  if (token) headers.set("authorization", `Bearer ${token}`);
  if (cluster) headers.set("x-service-cluster", cluster);
  return headers;
}

export async function api<T>(path: string, init: RequestInit = {}): Promise<T> {
  return (await apiWithHeaders<T>(path, init)).body;
}

/** As `api`, with the answer's headers (a list's page says its totals there). */
export async function apiWithHeaders<T>(path: string, init: RequestInit = {}): Promise<{ body: T; headers: Headers }> {
  const headers = authHeaders(clusterOf(window.location.search), init.headers);
  headers.set("accept", "application/json");
  if (init.body !== undefined && !headers.has("content-type")) headers.set("content-type", "application/json");
  const res = await fetch(path, { ...init, headers });
  if (res.status === 401 && token !== null) {
    setToken(null);
    navigate(loginPathFor(window.location.pathname + window.location.search), { replace: true });
  }
  if (!res.ok) throw new ApiError(res.status, await messageOf(res));
  // Some answers are a sentence (topic created or deleted): the text then.
  const body = ((res.headers.get("content-type") ?? "").includes("json") ? await res.json() : await res.text()) as T;
  return { body, headers: res.headers };
}

export async function login(user: string, password: string): Promise<void> {
  const res = await fetch("/api/login", {
    method: "POST",
    headers: { accept: "application/json", "content-type": "application/json" },
    body: JSON.stringify({ user, password }),
  });
  // The API says only UNAUTHORIZED (the clients compare that word): say what it means.
  if (res.status === 401) throw new ApiError(401, "Wrong user name or password.");
  if (!res.ok) throw new ApiError(res.status, await messageOf(res));
  setToken(((await res.json()) as LoginAnswer).token);
}

export async function logout(): Promise<void> {
  try {
    if (token) await api("/api/logout", { method: "POST" });
  } finally {
    setToken(null);
  }
}

export async function whoAmI(): Promise<SessionUser> {
  // Older servers left some fields out: each has its fallback.
  const s = await api<Partial<SessionAnswer> & Pick<SessionAnswer, "user" | "roles">>("/api/auth");
  return {
    name: s.user,
    roles: s.roles,
    groups: s.userInfo?.groups ?? [],
    kind: s.userInfo?.kind ?? "local",
    administrator: s.administrator ?? s.roles.includes("admin"),
    clusterRoles: s.clusterRoles ?? s.roles,
    everyTopic: s.everyTopic ?? true,
  };
}
