/**
 * The Kafka users API's shapes (SCRAM credentials of the cluster), declared once: the routes
 * validate and document with them, the UI imports them. A password is taken, never answered.
 */
import { z } from "zod";

export const SCRAM_MECHANISMS = ["SCRAM-SHA-256", "SCRAM-SHA-512"] as const;
/** Kafka's bounds on a credential's iterations; 4096 is what its own tools use. */
export const SCRAM_ITERATIONS = { min: 4096, max: 16384, default: 4096 } as const;
export const KAFKA_PASSWORD_MIN = 8;

/** The user's name as the brokers know it (User:<name>): no control characters, at most 255. */
export const kafkaUserName = z
  .string({ error: "name is required" })
  .min(1, "name is required")
  .max(255, "name has at most 255 characters")
  .regex(/^[^\p{Cc}\s]+$/u, "name has no spaces or control characters");

const password = z
  .string({ error: "password is required" })
  .min(KAFKA_PASSWORD_MIN, `a password has at least ${KAFKA_PASSWORD_MIN} characters`)
  .max(1024, "a password has at most 1024 characters");

const mechanism = z
  .string()
  .transform((v) => v.toUpperCase().replace(/_/g, "-"))
  .pipe(z.enum(SCRAM_MECHANISMS, { error: `mechanism is one of ${SCRAM_MECHANISMS.join(", ")}` }))
  .default("SCRAM-SHA-512");

const iterations = z
  .number({ error: "iterations is a number" })
  .int("iterations is an integer")
  .min(SCRAM_ITERATIONS.min, `iterations is at least ${SCRAM_ITERATIONS.min}`)
  .max(SCRAM_ITERATIONS.max, `iterations is at most ${SCRAM_ITERATIONS.max}`)
  .default(SCRAM_ITERATIONS.default);

export const createKafkaUserBody = z.object({ name: kafkaUserName, password, mechanism, iterations }).strict();
export const rotateKafkaUserBody = z.object({ password, mechanism, iterations }).strict();

export const kafkaUserView = z.object({
  name: z.string().describe("the user, User:<name> to the brokers' authorizer"),
  credentials: z.array(z.object({ mechanism: z.enum(SCRAM_MECHANISMS), iterations: z.number().int() })),
});

export type KafkaUserView = z.output<typeof kafkaUserView>;
export type NewKafkaUser = z.output<typeof createKafkaUserBody>;
export type KafkaUserRotation = z.output<typeof rotateKafkaUserBody>;
