import type { Context } from "hono";
import { z } from "zod";
import { AppError } from "../../errors.ts";
import { type AppEnv, clusterOf, userOf } from "../../http/context.ts";
import { defineRoute, eventStream, json, RouteGroup } from "../../http/route.ts";
import { feedResponse, type StreamRegistry } from "../../http/sse.ts";
import type { Scope } from "../access/scope.ts";
import type { Severity } from "./catalogue.ts";
import { type AlertNotification, type NotificationService, TOPIC_ALERTS } from "./notifications.ts";
import type { AlertOutbox } from "./outbox.ts";
import { alertSetting, alertSettings, delivery, MAX_CONDITION_LENGTH, notification, raisedNotification } from "./schemas.ts";
import type { AlertSettings } from "./settings.ts";

const TOPIC_ALERT_IDS = new Set<number>(Object.values(TOPIC_ALERTS).map((a) => a.id));

/**
 * Whether an identity may see a notification: one about a topic (its `instance`) only when the
 * topic is in its scope on the notification's cluster, as the topic list would show it.
 */
function visibleTo(scope: Scope | undefined): (n: AlertNotification) => boolean {
  if (!scope) return () => false;
  return (n) => !TOPIC_ALERT_IDS.has(n.alertId) || scope.topicAllowed(n.labels.cluster ?? "", n.labels.instance ?? "");
}

/** COMPAT.md: the alert stream's heartbeat comes every 10 s. */
const ALERT_HEARTBEAT_MS = 10_000;

/** An epoch-ms number or an ISO 8601 timestamp. */
const instant = z
  .string()
  .max(40)
  .transform((v, ctx) => {
    const ms = /^\d{1,15}$/.test(v) ? Number(v) : Date.parse(v);
    if (Number.isNaN(ms)) {
      ctx.addIssue({ code: "custom", message: "expected epoch milliseconds or an ISO 8601 timestamp" });
      return z.NEVER;
    }
    return ms;
  });

const listQuery = z
  .object({
    /** One notification by its id (the `id` of its generatorURL), as the UI opens it. */
    id: z.string().min(1).max(64).optional(),
    alertId: z.coerce.number().int().positive().optional(),
    category: z.string().min(1).max(64).optional(),
    state: z.enum(["active", "resolved"]).optional(),
    from: instant.optional(),
    to: instant.optional(),
    limit: z.coerce.number().int().min(1).max(10_000).default(1000),
    offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
  })
  .strict();

const settingParams = z.object({
  alert_setting_id: z
    .string()
    .regex(/^\d{1,9}$/, "alert_setting_id must be a positive integer")
    .transform(Number)
    .pipe(z.number().int().positive("alert_setting_id must be a positive integer")),
});
const conditionParams = settingParams.extend({
  condition_uuid: z
    .string()
    .regex(/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/, "condition_uuid must be a UUID (8-4-4-4-12)")
    .transform((s) => s.toLowerCase()),
});

const conditionAnswer = z.object({ id: z.string(), alertId: z.number(), condition: z.string() });
const tags = ["alerts"];
const SETTING = "/api/alerts/settings/{alert_setting_id}";
const conditionChange = <P extends typeof settingParams | typeof conditionParams>(
  method: "POST" | "DELETE",
  path: string,
  params: P,
  summary: string,
  change: "ADD" | "UPDATE" | "REMOVE",
) =>
  defineRoute({
    method,
    path,
    level: "write",
    summary,
    audit: { type: "ALERT_SETTING", change },
    tags,
    request: { params },
    responses: { 200: json(conditionAnswer) },
  });

export const alertApi = {
  list: defineRoute({
    method: "GET",
    path: "/api/alerts",
    level: "nodata",
    summary: "Alert notifications, newest first (filters: id, alertId, category, state, from, to; paged with limit and offset)",
    tags,
    request: { query: listQuery },
    responses: { 200: json(z.array(notification)) },
  }),
  raise: defineRoute({
    method: "POST",
    path: "/api/alerts",
    level: "write",
    summary: "Raises a notification from an outside system (the Go CLI's shape); `endsAt` set resolves it",
    tags,
    request: { body: raisedNotification },
    responses: { 200: json(notification) },
  }),
  stream: defineRoute({
    method: "GET",
    path: "/api/sse/alerts",
    level: "nodata",
    summary: "Live alert notifications (event stream)",
    tags,
    responses: { 200: eventStream("`data:<notification JSON>` lines (no type digit), `:` heartbeats every 10 s") },
  }),
  settings: defineRoute({
    method: "GET",
    path: "/api/alerts/settings",
    level: "nodata",
    summary: "Alert settings by category (Infrastructure, Consumers, and License, Connect, Topics)",
    tags,
    responses: { 200: json(alertSettings) },
  }),
  setting: defineRoute({
    method: "GET",
    path: SETTING,
    level: "nodata",
    summary: "One alert setting",
    tags,
    request: { params: settingParams },
    responses: { 200: json(alertSetting) },
  }),
  enable: defineRoute({
    method: "PUT",
    path: SETTING,
    level: "admin",
    summary: "Enables the setting (no body), or sets its state (body `true` or `false`)",
    audit: { type: "ALERT_SETTING", change: "UPDATE" },
    tags,
    request: { params: settingParams },
    responses: { 200: json(alertSetting) },
  }),
  conditions: defineRoute({
    method: "GET",
    path: `${SETTING}/condition`,
    level: "nodata",
    summary: "The setting's conditions: condition id to expression",
    tags,
    request: { params: settingParams },
    responses: { 200: json(z.record(z.string(), z.string())) },
  }),
  addCondition: conditionChange(
    "POST",
    `${SETTING}/condition`,
    settingParams,
    "Adds a condition (plain-text body); the id is assigned",
    "ADD",
  ),
  putCondition: conditionChange(
    "POST",
    `${SETTING}/condition/{condition_uuid}`,
    conditionParams,
    "Creates or replaces the condition of this id (plain-text body)",
    "UPDATE",
  ),
  deleteCondition: conditionChange("DELETE", `${SETTING}/condition/{condition_uuid}`, conditionParams, "Removes a condition", "REMOVE"),
  deliveries: defineRoute({
    method: "GET",
    path: "/api/alerts/deliveries",
    level: "read",
    summary:
      "The delivery of each notification to each channel (Alertmanagers, webhooks): PENDING, SENT or GAVE_UP (filters: state, notification)",
    tags,
    request: {
      query: z
        .object({
          state: z.enum(["PENDING", "SENT", "GAVE_UP"]).optional(),
          /** One notification's deliveries (its id), as its page in the UI shows them. */
          notification: z.string().min(1).max(64).optional(),
          limit: z.coerce.number().int().min(1).max(10_000).default(500),
        })
        .strict(),
    },
    responses: { 200: json(z.array(delivery)) },
  }),
};

/** A condition's plain-text body (the Go CLI sends text/plain; a JSON string is taken too). */
async function conditionText(c: Context<AppEnv>): Promise<string> {
  const raw = await c.req.text();
  if (raw.length > MAX_CONDITION_LENGTH * 4)
    throw new AppError("VALIDATION_FAILED", `The condition is longer than ${MAX_CONDITION_LENGTH} characters`);
  const t = raw.trim();
  if (t.startsWith('"') && t.endsWith('"')) {
    try {
      return String(JSON.parse(t));
    } catch {
      return t;
    }
  }
  return t;
}

/** PUT's body: none enables (COMPAT), `true`/`false` (or `{"enabled": ...}`) sets the state. */
async function enabledOf(c: Context<AppEnv>): Promise<boolean> {
  const t = (await c.req.text()).trim();
  if (t === "" || t === "true") return true;
  if (t === "false") return false;
  try {
    const v: unknown = JSON.parse(t);
    if (v && typeof v === "object" && typeof (v as { enabled?: unknown }).enabled === "boolean") return (v as { enabled: boolean }).enabled;
  } catch {
    /* answered below */
  }
  throw new AppError("VALIDATION_FAILED", 'The body must be empty (enable), `true`, `false` or {"enabled": true|false}');
}

/**
 * `POST /api/alerts`: the same labels are the same alert (as in Alertmanager), raised once while
 * it holds; an `endsAt` resolves it (or records it resolved). 409 when its setting is disabled.
 */
async function raiseFromOutside(
  c: Context<AppEnv>,
  notifications: NotificationService,
  body: z.output<typeof raisedNotification>,
): Promise<AlertNotification> {
  const startsAt = body.startsAt ? Date.parse(body.startsAt) : notifications.now();
  const endsAt = body.endsAt ? Date.parse(body.endsAt) : undefined;
  const { severity, category, instance, ...rest } = body.labels;
  const cluster = clusterOf(c);
  const fingerprint = `external/${cluster}/${body.alertId}/${JSON.stringify(Object.entries(body.labels).sort())}`;
  const raise = {
    alertId: body.alertId,
    cluster,
    summary: body.annotations.summary ?? "",
    severity: severity!.toUpperCase() as Severity,
    category: category ?? "External",
    instance: instance ?? "",
    source: body.annotations.source ?? userOf(c),
    ...(body.annotations.docs ? { docs: body.annotations.docs } : {}),
    labels: rest,
    fingerprint,
    startsAt,
  };
  const raised =
    endsAt === undefined
      ? await notifications.raise(raise)
      : ((await notifications.resolve(fingerprint, endsAt)) ?? (await notifications.raise({ ...raise, endsAt })));
  if (!raised) throw new AppError("CONFLICT", `Alert setting ${body.alertId} is disabled`);
  return raised;
}

export function alertRoutes(d: {
  notifications: NotificationService;
  settings: AlertSettings;
  outbox: AlertOutbox;
  streams: StreamRegistry;
}) {
  const { notifications, settings, streams } = d;
  const app = new RouteGroup();
  app.handle(alertApi.list, async (c) => {
    const visible = visibleTo(c.get("session")?.scope);
    return c.json((await notifications.list(c.req.valid("query"))).filter(visible), 200);
  });
  app.handle(alertApi.raise, async (c) => c.json(await raiseFromOutside(c, notifications, c.req.valid("json")), 200));
  app.handle(alertApi.stream, (c) => {
    const visible = visibleTo(c.get("session")?.scope);
    return feedResponse(c, streams, (send) => notifications.subscribe((n) => visible(n) && send(n)), ALERT_HEARTBEAT_MS);
  });
  app.handle(alertApi.settings, async (c) => {
    const categories: Record<string, z.output<typeof alertSetting>[]> = { Infrastructure: [], Consumers: [] };
    for (const s of await settings.list(clusterOf(c))) (categories[s.category] ??= []).push(s);
    return c.json({ categories }, 200);
  });
  app.handle(alertApi.setting, async (c) => c.json(await settings.get(clusterOf(c), c.req.valid("param").alert_setting_id), 200));
  app.handle(alertApi.enable, async (c) => {
    const id = c.req.valid("param").alert_setting_id;
    settings.definition(id);
    const enabled = await enabledOf(c);
    c.set("auditContent", { alertId: id, enabled });
    return c.json(await settings.setEnabled(clusterOf(c), id, enabled, userOf(c)), 200);
  });
  app.handle(alertApi.conditions, async (c) => c.json(await settings.conditions(clusterOf(c), c.req.valid("param").alert_setting_id), 200));
  app.handle(alertApi.addCondition, async (c) => {
    const id = c.req.valid("param").alert_setting_id;
    const saved = await settings.putCondition(clusterOf(c), id, await conditionText(c), userOf(c));
    c.set("auditContent", { alertId: id, conditionId: saved.id, condition: saved.expression });
    return c.json({ id: saved.id, alertId: id, condition: saved.expression }, 200);
  });
  app.handle(alertApi.putCondition, async (c) => {
    const { alert_setting_id: id, condition_uuid: uuid } = c.req.valid("param");
    const saved = await settings.putCondition(clusterOf(c), id, await conditionText(c), userOf(c), uuid);
    c.set("auditContent", { alertId: id, conditionId: saved.id, condition: saved.expression, created: saved.created });
    return c.json({ id: saved.id, alertId: id, condition: saved.expression }, 200);
  });
  app.handle(alertApi.deleteCondition, async (c) => {
    const { alert_setting_id: id, condition_uuid: uuid } = c.req.valid("param");
    const expression = await settings.deleteCondition(clusterOf(c), id, uuid);
    c.set("auditContent", { alertId: id, conditionId: uuid, condition: expression });
    return c.json({ id: uuid, alertId: id, condition: expression }, 200);
  });
  app.handle(alertApi.deliveries, async (c) => c.json(await d.outbox.deliveries(c.req.valid("query")), 200));
  return app;
}
