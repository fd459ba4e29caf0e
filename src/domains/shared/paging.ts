/** Search and paging of a large list on the server (the parameters: list-query.ts). */
import { DEFAULT_PER_PAGE } from "./list-query.ts";

/** Whether `name` matches the search (case-insensitive substring; no search matches all). */
export function matches(search: string | undefined, name: string): boolean {
  return !search || name.toLowerCase().includes(search.toLowerCase());
}

/**
 * Sorts `items` (given in name order) by `key`, ties staying in name order (a stable sort), or
 * without a key by name, and cuts the page the query asks (all of them without `page` or `perPage`).
 */
export function pageOf<T>(
  items: T[],
  q: { page?: number | undefined; perPage?: number | undefined; sortOrder?: "asc" | "desc" | undefined },
  key?: (item: T) => number | string,
): T[] {
  const sign = q.sortOrder === "desc" ? -1 : 1;
  let sorted: T[];
  if (!key) sorted = sign > 0 ? items : [...items].reverse();
  else {
    const keyed = items.map((item) => ({ item, k: key(item) }));
    keyed.sort((a, b) => sign * (typeof a.k === "number" && typeof b.k === "number" ? a.k - b.k : a.k < b.k ? -1 : a.k > b.k ? 1 : 0));
    sorted = keyed.map((x) => x.item);
  }
  if (q.page === undefined && q.perPage === undefined) return sorted;
  const per = q.perPage ?? DEFAULT_PER_PAGE;
  const start = ((q.page ?? 1) - 1) * per;
  return sorted.slice(start, start + per);
}
