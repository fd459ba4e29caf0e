/**
 * Parts of a query's answer that the routes declare and the UI reads: what was read of what, the
 * bound that ended the query, a record's headers. Imports only zod: the UI takes its types from here.
 */
import { z } from "zod";

/** Per partition, the offsets the query was to read ([from, to)) and the first it did not read (`next`). */
export const readRanges = z.array(
  z.object({
    partition: z.number().int(),
    from: z.number().int(),
    to: z.number().int().describe("the partition's end offset when the query began (not included)"),
    next: z.number().int().describe("the first offset not read: `to` once the partition was read whole"),
  }),
);

/** The bound that ended the query, its value, and the highest a query may SET here. */
export const stopLimit = z.object({
  setting: z.enum(["LIMIT", "max.size", "max.query.time", "max.idle.time"]),
  value: z.number().describe("records for LIMIT, bytes for max.size, milliseconds for the times"),
  of: z.enum(["read", "answer"]).optional().describe("max.size: whether the bytes read or the bytes of the answer reached it"),
  bound: z.number().optional().describe("the highest value a query may SET on this server (sql.maxSize, sql.maxQueryTime)"),
});

/** A Kafka header of a record (`headers=true`): its value as text when it is UTF-8, else base64. */
export const recordHeader = z.object({
  key: z.string(),
  value: z.string().nullable(),
  encoding: z.literal("base64").optional(),
});

export type ReadRanges = z.infer<typeof readRanges>;
export type StopLimit = z.infer<typeof stopLimit>;
export type RecordHeaderText = z.infer<typeof recordHeader>;
