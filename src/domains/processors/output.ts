/**
 * How a processor writes the values it makes: JSON text by default; with `SET output.format =
 * AVRO` (or `PROTOBUF`), in the schema registered for the target's values (subject
 * `<target>-value`, its latest version; for Protobuf the first message of its file), in the
 * registry's wire format, as an INSERT writes it. `SELECT STREAM *` writes the input's value bytes
 * unchanged whatever the format, so it needs no schema.
 *
 * The schema is checked against the program when the processor is created: an Avro record whose
 * fields hold every output column, and whose other fields have a default or allow null; a
 * Protobuf message with a field for every output column (its other fields take their defaults).
 */
import type avro from "avsc";
import { type AvroSchema, encoderFor, type ProtoTarget } from "../../engine/index.ts";
import { AppError, badRequest } from "../../errors.ts";
import type { InsertService } from "../insert/service.ts";
import type { StreamProgram } from "./types.ts";

/** The schema Loupe writes a topic's values in (InsertService.encoding with the format chosen). */
export type OutputSchemaOf = (
  cluster: string,
  topic: string,
  format: "AVRO" | "PROTOBUF",
) => Promise<{ avro?: AvroSchema; proto?: ProtoTarget }>;

/** Avro and Protobuf output are written as an INSERT writes them: in the target's registered schema. */
export function outputSchemaOf(inserts: InsertService): OutputSchemaOf {
  return async (cluster, topic, format) => {
    const { value } = await inserts.encoding(cluster, topic, { key: "STRING", value: format });
    if (!value.avro && !value.proto) throw new AppError("INTERNAL", `No ${format} schema for the values of topic '${topic}'`);
    return value;
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

/** The message's fit for the program's columns: a field (by its .proto or JSON name) for each; a 400 naming what is missing otherwise. */
function checkOutputMessage(target: ProtoTarget, program: StreamProgram): void {
  const fields = target.message.fieldsArray;
  const names = new Set(fields.flatMap((f) => [f.name, f.jsonName]));
  const missing = (program.columns ?? []).filter((c) => !names.has(c));
  if (missing.length > 0) {
    throw badRequest(
      `output.format = PROTOBUF: the message ${target.message.fullName.slice(1)} of topic '${program.target}' has no field ${missing.map((m) => `'${m}'`).join(", ")} (its fields: ${fields.map((f) => f.name).join(", ")})`,
    );
  }
  const required = fields.filter((f) => f.required && !(program.columns ?? []).includes(f.name)).map((f) => f.name);
  if (required.length > 0) {
    throw badRequest(
      `output.format = PROTOBUF: the program does not write ${required.map((r) => `'${r}'`).join(", ")}, which the message ${target.message.fullName.slice(1)} requires`,
    );
  }
}

/** The encoder of a program's output values, or null when values are JSON (or the input's bytes). */
export async function outputEncoder(program: StreamProgram, cluster: string, schemaOf: OutputSchemaOf): Promise<ValueEncoder | null> {
  const format = program.settings.outputFormat;
  if (format === "JSON" || program.columns === null) return null;
  const schema = await schemaOf(cluster, program.target, format);
  if (format === "PROTOBUF") {
    checkOutputMessage(schema.proto!, program);
    const encode = encoderFor("PROTOBUF", undefined, schema.proto);
    return (value) => encode(value, "_value");
  }
  checkOutputSchema(schema.avro!, program);
  const encode = encoderFor("AVRO", schema.avro);
  return (value) => encode(value, "_value");
}
