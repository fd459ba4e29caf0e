/** A log line as the log routes answer it. Imports only zod: the UI takes its type from here. */
import { z } from "zod";

export const logLine = z.object({
  timestamp: z.number(),
  logger: z.string(),
  stacktrace: z.string(),
  thread: z.string(),
  message: z.string(),
  time: z.string(),
  level: z.string(),
  fields: z
    .record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()]))
    .describe("the line's structured fields (request: method, path, status, ms, user...); secrets redacted, long values cut"),
});

export type LogLine = z.output<typeof logLine>;
