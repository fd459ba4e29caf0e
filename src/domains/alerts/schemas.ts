/** The SPEC's alert notification, as the alert routes answer it. Imports only zod. */
import { z } from "zod";

export const notification = z.object({
  alertId: z.number(),
  labels: z.record(z.string(), z.string()),
  annotations: z.record(z.string(), z.string()),
  startsAt: z.string(),
  endsAt: z.string().nullable(),
  generatorURL: z.string(),
});
export type AlertNotification = z.output<typeof notification>;
