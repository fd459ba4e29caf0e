/**
 * What the admin pages (users, groups, service accounts) share: one query key under which their
 * lists are cached (a change to one may change another: a deleted group leaves its members), and
 * the calls of one kind of named resource (ui/api/groups.ts, users.ts, service-accounts.ts).
 */
import { useQuery } from "@tanstack/react-query";
import type { z } from "zod";
import { api } from "../session.ts";
import { checked } from "./check.ts";

export const ACCESS_KEY = ["access"] as const;

/**
 * The five calls of `/api/<resource>` (src/http/crud.ts), typed from the server's schemas. A
 * creation and a change are checked with the route's own request schemas (`schemas`, which the
 * forms check with too) before they are sent.
 */
export function resourceApi<View, Created, C extends z.ZodType, U extends z.ZodType>(path: string, schemas: { create: C; change: U }) {
  const one = (name: string) => `${path}/${encodeURIComponent(name)}`;
  return {
    key: [...ACCESS_KEY, path] as const,
    schemas,
    list: () => api<View[]>(path),
    get: (name: string) => api<View>(one(name)),
    create: (body: z.input<C>) => api<Created>(path, { method: "POST", body: JSON.stringify(checked(schemas.create, body)) }),
    update: (name: string, change: z.input<U>) =>
      api<View>(one(name), { method: "PUT", body: JSON.stringify(checked(schemas.change, change)) }),
    remove: (name: string) => api<View>(one(name), { method: "DELETE" }),
  };
}

/** The list of one kind of resource, as a query. */
export function useResources<View>(resource: { key: readonly unknown[]; list: () => Promise<View[]> }) {
  return useQuery({ queryKey: resource.key, queryFn: resource.list });
}
