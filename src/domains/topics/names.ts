import { z } from "zod";

/** Kafka's rule for topic names: letters, digits, '.', '_', '-'; 1 to 249; not "." or "..". */
export const topicName = z
  .string()
  .min(1, "a topic name must not be empty")
  .max(249, "a topic name has at most 249 characters")
  .regex(/^[a-zA-Z0-9._-]+$/, "a topic name may only contain letters, digits, '.', '_' and '-'")
  .refine((n) => n !== "." && n !== "..", "a topic name cannot be '.' or '..'");
