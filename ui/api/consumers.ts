/** Consumer groups as the UI calls them; types from the server's schemas (src/domains/consumers/schemas.ts). */
import type { z } from "zod";
import type {
  ConsumerGroupDetail,
  ConsumerGroupLagHistory,
  ConsumerGroupSummary,
  GroupConfigEntry,
  OffsetResetAnswer,
  offsetResetBody,
  ShareGroupDetail,
} from "../../src/domains/consumers/schemas.ts";
import { api } from "../session.ts";

export type { ConsumerGroupDetail, ConsumerGroupSummary, GroupConfigEntry, ShareGroupDetail };
export type LagHistory = ConsumerGroupLagHistory;
export type OffsetReset = z.input<typeof offsetResetBody>;

const path = (group: string) => `/api/consumers/${encodeURIComponent(group)}`;

export const fetchGroups = () => api<ConsumerGroupSummary[]>("/api/consumers");
export const fetchGroup = (group: string) => api<ConsumerGroupDetail>(path(group));
export const resetOffsets = (group: string, body: OffsetReset) =>
  api<OffsetResetAnswer>(`${path(group)}/offsets`, { method: "PUT", body: JSON.stringify(body) });
/** `window` as the API takes it: `1h`, `15m`, `5m`. */
export const fetchLagHistory = (group: string, window: string) => api<LagHistory>(`${path(group)}/lag-history?window=${window}`);

const sharePath = (group: string) => `/api/share-groups/${encodeURIComponent(group)}`;

export const fetchShareGroup = (group: string) => api<ShareGroupDetail>(sharePath(group));
export const resetShareOffsets = (group: string, body: OffsetReset) =>
  api<OffsetResetAnswer>(`${sharePath(group)}/offsets`, { method: "PUT", body: JSON.stringify(body) });
export const deleteShareGroup = (group: string) => api<unknown>(sharePath(group), { method: "DELETE" });
export const fetchShareConfigs = (group: string) => api<GroupConfigEntry[]>(`${sharePath(group)}/configs`);
/** Sets (a null value: removes) the group's own share.* configs. */
export const alterShareConfigs = (group: string, configs: Array<{ key: string; value: string | null }>) =>
  api<unknown>(`${sharePath(group)}/configs`, { method: "PUT", body: JSON.stringify({ configs }) });
