/**
 * The shapes of the schema registry proxy's requests and of the registry's answers as it passes
 * them on. Imports only zod: the UI takes its types and its form's check from here.
 */
import { z } from "zod";

/** The registry's compatibility levels, as the clients send them. */
export const COMPATIBILITY_LEVELS = [
  "NONE",
  "FULL",
  "FORWARD",
  "BACKWARD",
  "FULL_TRANSITIVE",
  "FORWARD_TRANSITIVE",
  "BACKWARD_TRANSITIVE",
] as const;
export type CompatibilityLevel = (typeof COMPATIBILITY_LEVELS)[number];

export const SCHEMA_TYPES = ["AVRO", "PROTOBUF", "JSON"] as const;

/**
 * A schema as registered or checked. Only `schema` is required; the rest is the registry's
 * (schemaType, references, metadata, ruleSet) and passed on as sent.
 */
export const schemaBody = z
  .object({
    schema: z.string().min(1, "the schema text is empty"),
    schemaType: z.enum(SCHEMA_TYPES).optional(),
    references: z
      .array(z.object({ name: z.string(), subject: z.string(), version: z.number().int() }).passthrough())
      .max(1_000)
      .optional(),
  })
  .passthrough();

/** `{"compatibility": X}`; X in any case, sent upstream in upper case as the registry names it. */
export const compatibilityBody = z.object({
  compatibility: z
    .string()
    .transform((s) => s.toUpperCase())
    .pipe(z.enum(COMPATIBILITY_LEVELS, { message: `one of ${COMPATIBILITY_LEVELS.join(", ")}` })),
});

export const levelAnswer = z.object({ compatibilityLevel: z.enum(COMPATIBILITY_LEVELS) }).strict();
/** A version as the registry answers it; `schemaType` is left out for Avro. */
const versionFields = z.object({
  subject: z.string(),
  version: z.number().int(),
  id: z.number().int(),
  schema: z.string(),
  schemaType: z.string().optional(),
});
/** The registry may add fields (references, metadata, ruleSet): passed on as sent. */
export const versionAnswer = versionFields.passthrough();

export const registerAnswer = z.object({ id: z.number().int() }).strict();
export const compatibilityAnswer = z.object({ is_compatible: z.boolean(), messages: z.array(z.string()).optional() }).passthrough();

/** The fields the UI reads of a version (the rest passes through). */
export type SchemaVersion = z.output<typeof versionFields>;
export type Compatibility = z.output<typeof compatibilityAnswer>;
export type RegisterAnswer = z.output<typeof registerAnswer>;
export type LevelAnswer = z.output<typeof levelAnswer>;
