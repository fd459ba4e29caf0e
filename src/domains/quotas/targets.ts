/**
 * The SPEC's quota paths and types for a user, a client id or both (a default as `null`): what
 * the server answers and what the UI builds its paths with. Imports only the schemas.
 */

import { DEFAULT_NAME, type QuotaEntityType } from "./schemas.ts";

/**
 * What a quota applies to: a user and/or a client id; `null` is the default of that kind,
 * `undefined` that the entity does not name it.
 */
export interface QuotaTarget {
  user?: string | null;
  clientId?: string | null;
}

/** A path's name: `<default>` is the default entity of its kind. */
export const nameOf = (name: string): string | null => (name === DEFAULT_NAME ? null : name);
const shown = (name: string | null): string => name ?? DEFAULT_NAME;

/** The SPEC's type, name and child of a target. */
export function describeTarget(t: QuotaTarget): { entityType: QuotaEntityType; entityName: string; child?: string } {
  if (t.user === undefined) {
    return t.clientId === null
      ? { entityType: "CLIENTS DEFAULT", entityName: DEFAULT_NAME }
      : { entityType: "CLIENT", entityName: t.clientId! };
  }
  if (t.clientId === undefined) {
    return t.user === null ? { entityType: "USERS DEFAULT", entityName: DEFAULT_NAME } : { entityType: "USER", entityName: t.user };
  }
  if (t.clientId === null) return { entityType: "USERS", entityName: shown(t.user) };
  return { entityType: "USERCLIENT", entityName: shown(t.user), child: t.clientId };
}

/** The target's own path: the route whose PUT and DELETE change it. */
export function urlOf(t: QuotaTarget): string {
  const seg = (name: string | null) => encodeURIComponent(shown(name));
  if (t.user === undefined) return t.clientId === null ? "/api/quotas/clients" : `/api/quotas/clients/${seg(t.clientId!)}`;
  if (t.clientId === undefined) return t.user === null ? "/api/quotas/users" : `/api/quotas/users/${seg(t.user)}`;
  const user = `/api/quotas/users/${seg(t.user)}/clients`;
  return t.clientId === null ? user : `${user}/${seg(t.clientId)}`;
}
