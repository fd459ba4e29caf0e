/** The SQL library's requests and answers. Imports only zod: the UI takes its types and checks from here. */
import { z } from "zod";

/** Most characters of a saved query's text: far beyond any query a person writes. */
export const MAX_SAVED_TEXT = 64 * 1024;

export const name = z
  .string()
  .min(1, "the name is empty")
  .max(100, "the name is longer than 100 characters")
  .regex(/^[^\u0000-\u001f\u007f]*$/, "the name has control characters")
  .describe("the query's name (URL-encoded)");
export const savedBody = z.object({
  text: z
    .string({ error: "text (the query) is required" })
    .max(MAX_SAVED_TEXT, `the query is longer than ${MAX_SAVED_TEXT} characters`)
    .refine((t) => t.trim().length > 0, "the query is empty"),
});
export const historyQuery = z.object({
  limit: z.coerce.number().int().min(1).max(1000).default(200).describe("Most entries answered (at most 200 are kept)"),
});

export const historyEntry = z.object({
  id: z.number().int(),
  cluster: z.string(),
  text: z.string(),
  ranAt: z.number().int(),
  rows: z.number().int().nullable().describe("Records returned, once the run ended"),
  stopReason: z.string().nullable().describe("Why the run ended (END, LIMIT, STOPPED, CLIENT, ERROR, INVALID...); null while it runs"),
});
export const savedQuery = z.object({ name: z.string(), text: z.string(), createdAt: z.number().int(), updatedAt: z.number().int() });

export const clearAnswer = z.object({ removed: z.number().int() });
export const savedAnswer = savedQuery.extend({ replaced: z.boolean() });

/** One run of a query, as the history lists it. */
export type HistoryEntry = z.output<typeof historyEntry>;
export type SavedQuery = z.output<typeof savedQuery>;
export type ClearAnswer = z.output<typeof clearAnswer>;
export type SavedAnswer = z.output<typeof savedAnswer>;
