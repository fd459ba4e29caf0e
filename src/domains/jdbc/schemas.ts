/**
 * The answer of an INSERT (POST /api/jdbc/insert and the prepared form). Imports only zod: the
 * UI takes its types from here.
 */
import { z } from "zod";

export const insertAnswer = z.object({
  topic: z.string(),
  /** Records written, every one acknowledged by the in-sync replicas. */
  records: z.number().int(),
  keyType: z.string(),
  valueType: z.string(),
  /** The statement's: where each record went, in statement order (the workbench shows them; the driver ignores the body). */
  offsets: z.array(z.object({ partition: z.number().int(), offset: z.number().int() })).optional(),
});

export type InsertAnswer = z.infer<typeof insertAnswer>;
