/** The alerts API (`/api/alerts`); types and the condition's request schema from the server's (src/domains/alerts/schemas.ts). */
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import type { z } from "zod";
import {
  type AlertNotification,
  type AlertSetting,
  type alertSettings,
  conditionText,
  type Delivery,
} from "../../src/domains/alerts/schemas.ts";
import { api } from "../session.ts";
import { checked } from "./check.ts";

export type { AlertNotification, AlertSetting, Delivery };

/** `GET /api/alerts/settings`: the settings under `categories`, by category. */
type SettingsAnswer = z.output<typeof alertSettings>;

export { conditionText };

export const ALERTS_KEY = ["alerts"] as const;
const SETTINGS_KEY = [...ALERTS_KEY, "settings"] as const;

/** The list's filters as the API takes them (epoch ms for the times). */
export interface NotificationQuery {
  alertId?: string;
  category?: string;
  state?: string;
  from?: number;
  to?: number;
  limit: number;
  offset: number;
}

function listParams(q: NotificationQuery): URLSearchParams {
  const params = new URLSearchParams({ limit: String(q.limit), offset: String(q.offset) });
  if (q.alertId) params.set("alertId", q.alertId);
  if (q.category) params.set("category", q.category);
  if (q.state) params.set("state", q.state);
  if (q.from !== undefined) params.set("from", String(q.from));
  if (q.to !== undefined) params.set("to", String(q.to));
  return params;
}

export const alertsApi = {
  list: (q: NotificationQuery) => api<AlertNotification[]>(`/api/alerts?${listParams(q)}`),
  /** One notification by its id (its generatorURL's), or null when there is none (or it is not the user's to see). */
  one: async (id: string) => (await api<AlertNotification[]>(`/api/alerts?${new URLSearchParams({ id })}`))[0] ?? null,
  settings: () => api<SettingsAnswer>("/api/alerts/settings"),
  setEnabled: (id: number, enabled: boolean) =>
    api<AlertSetting>(`/api/alerts/settings/${id}`, { method: "PUT", body: String(enabled), headers: { "content-type": "text/plain" } }),
  /** The text is checked with the server's own rule first: a refusal costs no request. */
  addCondition: (setting: AlertSetting, text: string) =>
    api<unknown>(`/api/alerts/settings/${setting.id}/condition`, {
      method: "POST",
      body: checked(conditionText(setting), text),
      headers: { "content-type": "text/plain" },
    }),
  deleteCondition: (settingId: number, conditionId: string) =>
    api<unknown>(`/api/alerts/settings/${settingId}/condition/${conditionId}`, {
      method: "DELETE",
    }),
  deliveries: (q: { state?: Delivery["state"]; notification?: string; limit: number }) => {
    const params = new URLSearchParams({ limit: String(q.limit) });
    if (q.state) params.set("state", q.state);
    if (q.notification) params.set("notification", q.notification);
    return api<Delivery[]>(`/api/alerts/deliveries?${params}`);
  },
};

/** A page of notifications; the previous page stays shown while the next is fetched. */
export const useNotifications = (q: NotificationQuery) =>
  useQuery({ queryKey: [...ALERTS_KEY, "list", q], queryFn: () => alertsApi.list(q), placeholderData: keepPreviousData });

export const useNotification = (id: string) => useQuery({ queryKey: [...ALERTS_KEY, "one", id], queryFn: () => alertsApi.one(id) });

/** The settings of the cluster shown, by category. */
export const useAlertSettings = (cluster: string | null) => useQuery({ queryKey: [...SETTINGS_KEY, cluster], queryFn: alertsApi.settings });

export const settingsKey = SETTINGS_KEY;

/** Delivery rows, read again every few seconds: the outbox retries on its own. */
export const useDeliveries = (q: { state?: Delivery["state"]; notification?: string; limit: number }, enabled = true) =>
  useQuery({
    queryKey: [...ALERTS_KEY, "deliveries", q],
    queryFn: () => alertsApi.deliveries(q),
    enabled,
    refetchInterval: 5_000,
  });
