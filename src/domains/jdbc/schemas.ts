/**
 * The answers of the JDBC routes: an INSERT's (POST /api/jdbc/insert and the prepared form), the
 * tables and a prepared insert's. Imports only zod: the UI takes its types from here.
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

/** A topic as a JDBC table. */
export const jdbcTable = z.object({
  name: z.string(),
  keyType: z.string(),
  valueType: z.string(),
  keySchema: z.string().optional(),
  valueSchema: z.string().optional(),
});

export const preparedField = z.object({ name: z.string(), parents: z.array(z.string()), isKey: z.boolean() });
/** What the driver decodes: `valueSchema` is a required string, `keySchema` may be absent. */
export const preparedInfo = z.object({
  topic: z.string(),
  fields: z.array(preparedField),
  keyType: z.string(),
  valueType: z.string(),
  keySchema: z.string().optional(),
  valueSchema: z.string(),
});
export const preparedAnswer = z.object({ info: preparedInfo.nullable(), error: z.string().optional() });

export type JdbcTable = z.output<typeof jdbcTable>;
export type PreparedField = z.output<typeof preparedField>;
export type PreparedInfo = z.output<typeof preparedInfo>;
