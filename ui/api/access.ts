/**
 * What the admin pages (users, groups, service accounts) share: one query key under which their
 * lists are cached (a change to one may change another: a deleted group leaves its members), and
 * the calls of one kind of named resource (ui/api/groups.ts, users.ts, service-accounts.ts).
 */
import { useQuery } from "@tanstack/react-query";
import { api } from "../session.ts";

export const ACCESS_KEY = ["access"] as const;

/** The five calls of `/api/<resource>` (src/http/crud.ts), typed from the server's schemas. */
export function resourceApi<View, Created, NewBody, ChangeBody>(path: string) {
  const one = (name: string) => `${path}/${encodeURIComponent(name)}`;
  return {
    key: [...ACCESS_KEY, path] as const,
    list: () => api<View[]>(path),
    get: (name: string) => api<View>(one(name)),
    create: (body: NewBody) => api<Created>(path, { method: "POST", body: JSON.stringify(body) }),
    update: (name: string, change: ChangeBody) => api<View>(one(name), { method: "PUT", body: JSON.stringify(change) }),
    remove: (name: string) => api<View>(one(name), { method: "DELETE" }),
  };
}

/** The list of one kind of resource, as a query. */
export function useResources<View>(resource: { key: readonly unknown[]; list: () => Promise<View[]> }) {
  return useQuery({ queryKey: resource.key, queryFn: resource.list });
}
