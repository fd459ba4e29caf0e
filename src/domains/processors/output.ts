/**
 * How a processor writes the values it makes: JSON text by default; with `SET output.format =
 * AVRO`, Avro in the schema registered for the target's values (subject `<target>-value`, its
 * latest version), in the registry's wire format, as an INSERT writes it. `SELECT STREAM *`
 * writes the input's value bytes unchanged whatever the format, so it needs no schema.
 *
 * The schema is checked against the program when the processor is created: a record whose
 * fields hold every output column, and whose other fields have a default or allow null.
 */
import type avro from "avsc";
import { type AvroSchema, encoderFor } from "../../engine/index.ts";
import { AppError, badRequest } from "../../errors.ts";
import type { InsertService } from "../insert/service.ts";
import type { StreamProgram } from "./types.ts";

/** The Avro schema Loupe writes a topic's values in (InsertService.encoding with AVRO chosen). */
export type AvroSchemaOf = (cluster: string, topic: string) => Promise<AvroSchema>;

/** Avro output is written as an INSERT writes Avro: in the target's registered schema. */
export function avroSchemaOf(inserts: InsertService): AvroSchemaOf {
  return async (cluster, topic) => {
    const { value } = await inserts.encoding(cluster, topic, { key: "STRING", value: "AVRO" });
    if (!value.avro) throw new AppError("INTERNAL", `No Avro schema for the values of topic '${topic}'`);
    return value.avro;
  };
}

/** Encodes one output value; throws EncodeError naming the field that does not fit. */
export type ValueEncoder = (value: unknown) => Uint8Array | null;

const nullable = (type: avro.Type): boolean =>
  type.typeName === "null" || ((type as avro.types.UnwrappedUnionType).types ?? []).some((t) => t.typeName === "null");

/** The schema's fit for the program's columns; a 400 naming what is missing otherwise. */
export function checkOutputSchema(schema: AvroSchema, program: StreamProgram): void {
  const columns = program.columns ?? [];
  const where = `the value schema of topic '${program.target}'`;
  if (schema.type.typeName !== "record") {
    throw badRequest(`output.format = AVRO writes one record per output: ${where} is a ${schema.type.typeName}, not a record`);
  }
  const fields = (schema.type as avro.types.RecordType).fields;
  const names = new Set(fields.map((f) => f.name));
  const missing = columns.filter((c) => !names.has(c));
  if (missing.length > 0) {
    throw badRequest(
      `output.format = AVRO: ${where} has no field ${missing.map((m) => `'${m}'`).join(", ")} (its fields: ${[...names].join(", ")})`,
    );
  }
  const unset = fields.filter((f) => !columns.includes(f.name) && f.defaultValue() === undefined && !nullable(f.type)).map((f) => f.name);
  if (unset.length > 0) {
    throw badRequest(
      `output.format = AVRO: the program does not write ${unset.map((u) => `'${u}'`).join(", ")}, which ${where} requires (no default, not nullable)`,
    );
  }
}

/** The encoder of a program's output values, or null when values are JSON (or the input's bytes). */
export async function outputEncoder(program: StreamProgram, cluster: string, schemaOf: AvroSchemaOf): Promise<ValueEncoder | null> {
  if (program.settings.outputFormat !== "AVRO" || program.columns === null) return null;
  const schema = await schemaOf(cluster, program.target);
  checkOutputSchema(schema, program);
  const encode = encoderFor("AVRO", schema);
  return (value) => encode(value, "_value");
}
