/** The quotas API (`/api/quotas`); types and request schemas from the server's (src/domains/quotas/schemas.ts). */
import { useQuery } from "@tanstack/react-query";
import {
  type EffectiveQuota,
  type QuotaEntry,
  type QuotaKey,
  type QuotaValuesBody,
  quotaKeysBody,
  quotaValuesBody,
} from "../../src/domains/quotas/schemas.ts";
import { api } from "../session.ts";
import { ACCESS_KEY } from "./access.ts";
import { checked } from "./check.ts";

export type { EffectiveQuota, QuotaEntry, QuotaKey, QuotaValuesBody };
export { quotaValuesBody };

/** Under the admin pages' key: their list and dialog (ResourceList) reload it after a change. */
const KEY = [...ACCESS_KEY, "/api/quotas"] as const;

export const quotasApi = {
  key: KEY,
  list: () => api<QuotaEntry[]>("/api/quotas"),
  /** `url` is an entry's own path (`QuotaEntry.url`, or `urlOf` of a new one). */
  set: (url: string, body: QuotaValuesBody) =>
    api<QuotaEntry>(url, { method: "PUT", body: JSON.stringify(checked(quotaValuesBody, body)) }),
  /** No names: all three constraints. */
  remove: (url: string, keys: QuotaKey[] = []) =>
    api<QuotaEntry>(url, { method: "DELETE", body: JSON.stringify(checked(quotaKeysBody, keys)) }),
  effective: (user: string, clientId: string) => api<EffectiveQuota>(`/api/quotas/effective?${new URLSearchParams({ user, clientId })}`),
};

/** The list, as the page shows it (`select`: its rows). */
export const useQuotas = <T>(select: (list: QuotaEntry[]) => T) => useQuery({ queryKey: KEY, queryFn: quotasApi.list, select });

/** Which quota applies to a user with a client id; asked once both are given. */
export const useEffectiveQuota = (ask: { user: string; clientId: string } | null) =>
  useQuery({
    queryKey: [...KEY, "effective", ask?.user, ask?.clientId],
    queryFn: () => quotasApi.effective(ask!.user, ask!.clientId),
    enabled: ask !== null,
  });
