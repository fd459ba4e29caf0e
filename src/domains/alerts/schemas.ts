/** The SPEC's alert setting and notification, as the alert routes take and answer them. Imports only zod. */
import { z } from "zod";

export const notification = z.object({
  alertId: z.number(),
  labels: z.record(z.string(), z.string()),
  annotations: z.record(z.string(), z.string()),
  startsAt: z.string(),
  endsAt: z.string().nullable(),
  generatorURL: z.string(),
  /** Beyond the SPEC: the notification's own id (in its generatorURL). */
  id: z.string(),
});
export type AlertNotification = z.output<typeof notification>;

export const alertSetting = z.object({
  id: z.number().int().positive(),
  description: z.string(),
  category: z.string(),
  enabled: z.boolean(),
  isAvailable: z.boolean(),
  /** Beyond the SPEC: why `isAvailable` is false; null when it is true. */
  unavailableReason: z.string().nullable(),
  docs: z.string(),
  /** Condition id to expression. */
  conditions: z.record(z.string(), z.string()),
  conditionTemplate: z.string().nullable(),
  conditionRegex: z.string(),
  /** Beyond the SPEC: the severity its notifications carry. */
  severity: z.string(),
});
export type AlertSetting = z.output<typeof alertSetting>;

/** `categories.Infrastructure`, `categories.Consumers`, and the other groups (License, Connect, Topics) under their own keys. */
export const alertSettings = z.object({ categories: z.record(z.string(), z.array(alertSetting)) });

export const SEVERITIES = ["INFO", "LOW", "MEDIUM", "HIGH", "CRITICAL"] as const;

/** Longest condition text accepted. */
export const MAX_CONDITION_LENGTH = 1_000;

/** What a condition is checked against: the setting's template and `conditionRegex` (none: it takes no conditions). */
export interface ConditionRule {
  id: number;
  description: string;
  conditionTemplate?: string | null;
  conditionRegex?: string | null;
}

/**
 * A condition's text as a setting takes it: trimmed, each run of white space one space, matching
 * the setting's `conditionRegex`, at most MAX_CONDITION_LENGTH characters. The server's check
 * (conditions.ts) and the UI's condition form both use it, so the form says the server's words
 * before anything is sent. An issue that names the template carries it in `params.template`.
 */
export function conditionText(rule: ConditionRule) {
  const { conditionTemplate: template, conditionRegex: regex } = rule;
  const matcher = template && regex ? new RegExp(regex) : null;
  return z
    .string()
    .transform((text) => text.trim().replace(/\s+/g, " "))
    .superRefine((expression, ctx) => {
      const named = { template, regex };
      if (!matcher) ctx.addIssue({ code: "custom", message: `Alert setting ${rule.id} (${rule.description}) takes no conditions` });
      else if (expression.length === 0)
        ctx.addIssue({ code: "custom", message: `The condition is empty; expected: ${template}`, params: named });
      else if (expression.length > MAX_CONDITION_LENGTH)
        ctx.addIssue({ code: "custom", message: `The condition is longer than ${MAX_CONDITION_LENGTH} characters` });
      else if (!matcher.test(expression))
        ctx.addIssue({
          code: "custom",
          message: `The condition '${expression}' does not match the template: ${template} (also lag-seconds >= N, '*' and '?' in names, and 'for 5m')`,
          params: named,
        });
    });
}

/**
 * `POST /api/alerts`: a notification raised by an outside system, in the shape the Go CLI sends
 * (CLIENTS.md 3): severity required (any case), `endsAt` always present and `""` when unset.
 */
export const raisedNotification = z.object({
  alertId: z.number().int().positive(),
  labels: z
    .record(z.string().max(200), z.string().max(1_000))
    .refine((l) => Object.keys(l).length <= 32, "at most 32 labels")
    .refine((l) => typeof l.severity === "string" && (SEVERITIES as readonly string[]).includes(l.severity.toUpperCase()), {
      message: `labels.severity is required: one of ${SEVERITIES.join(", ")}`,
    }),
  annotations: z
    .record(z.string().max(200), z.string().max(10_000))
    .refine((a) => Object.keys(a).length <= 32, "at most 32 annotations")
    .default({}),
  startsAt: z.union([z.literal(""), z.string().datetime({ offset: true })]).optional(),
  endsAt: z
    .union([z.literal(""), z.string().datetime({ offset: true })])
    .nullable()
    .optional(),
  generatorURL: z.string().max(2_000).optional(),
});

/** One channel's delivery of one notification: the outbox row as the API shows it. */
export const delivery = z.object({
  notification: z.string(),
  alertId: z.number(),
  channel: z.string(),
  /** PENDING (to send, retrying), SENT (acknowledged with a 2xx), GAVE_UP (too old to send). */
  state: z.enum(["PENDING", "SENT", "GAVE_UP"]),
  attempts: z.number(),
  lastError: z.string().nullable(),
  nextAttemptAt: z.number().nullable(),
  sentAt: z.number().nullable(),
});
export type Delivery = z.output<typeof delivery>;
