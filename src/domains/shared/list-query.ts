/**
 * Paging, search and sort of a large list (`GET /api/topics`, `GET /api/consumers`), opt-in by
 * query parameters: a request without them gets every item, as clients that decode a plain
 * array expect. The answer stays a JSON array (the page); the headers say how many matched.
 */
import { z } from "zod";

/** Items per page when `page` is given without `perPage`. */
export const DEFAULT_PER_PAGE = 100;
export const MAX_PER_PAGE = 1_000;

const positive = (what: string, max: number) =>
  z
    .string()
    .regex(/^\d{1,9}$/, `${what} must be a positive integer`)
    .transform(Number)
    .refine((n) => n >= 1 && n <= max, `${what} must be between 1 and ${max}`);

/** The parameters both lists take; each adds its `orderBy` (and the topics `internal`). */
export const listQueryFields = {
  search: z.string().max(255).optional().describe("only items whose name contains this text, ignoring case"),
  page: positive("page", 1_000_000_000).optional().describe(`1-based page of \`perPage\` items (default ${DEFAULT_PER_PAGE})`),
  perPage: positive("perPage", MAX_PER_PAGE).optional().describe(`items per page, 1 to ${MAX_PER_PAGE}`),
  sortOrder: z.enum(["asc", "desc"]).optional().describe("asc (the default) or desc; ties go by name, A to Z"),
};

/** What the answer's headers say; `X-Total-Count` is the number of matches. */
export const listHeaders = {
  "X-Total-Count": {
    description: "Items that match the search and filters (the page is a part of them)",
    schema: { type: "integer" as const },
  },
  "X-Unfiltered-Count": { description: "Items the caller may see, before the search and filters", schema: { type: "integer" as const } },
};

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
