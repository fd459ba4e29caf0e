/** The answer of `GET /api/health`. Imports only zod: the UI takes its type from here. */
import { z } from "zod";

export const healthAnswer = z.object({
  status: z.enum(["UP", "DEGRADED", "DOWN"]),
  version: z.string(),
  uptimeMs: z.number(),
  store: z.object({ status: z.enum(["UP", "DOWN"]), error: z.string().optional() }),
  clusters: z.array(
    z.object({
      name: z.string(),
      default: z.boolean(),
      status: z.enum(["UP", "DOWN"]),
      brokers: z.number().optional(),
      latencyMs: z.number().optional(),
      error: z.string().optional(),
    }),
  ),
  jobs: z
    .array(
      z.object({
        name: z.string(),
        enabled: z.boolean().describe("false: turned off in the configuration"),
        running: z.boolean().describe("started and not stopped"),
        lastRunAt: z.number().nullable().describe("epoch ms of the last run that worked"),
        lastErrorAt: z.number().nullable().describe("epoch ms of the last run that failed (the message is in the log)"),
      }),
    )
    .describe("Loupe's background jobs, in the order they start"),
});

export type HealthAnswer = z.output<typeof healthAnswer>;
