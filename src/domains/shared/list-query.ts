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
