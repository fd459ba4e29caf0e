/** Consumer groups as the UI calls them; types from the server's schemas (src/domains/consumers/schemas.ts). */
import { keepPreviousData, useInfiniteQuery } from "@tanstack/react-query";
import type { z } from "zod";
import type {
  ConsumerGroupDetail,
  ConsumerGroupLagHistory,
  ConsumerGroupSummary,
  GroupConfigEntry,
  GroupListQuery,
  OffsetResetAnswer,
  offsetResetBody,
  ShareGroupDetail,
} from "../../src/domains/consumers/schemas.ts";
import { api, apiWithHeaders } from "../session.ts";
import { LIST_REFRESH_MS } from "./topics.ts";

export type { ConsumerGroupDetail, ConsumerGroupSummary, GroupConfigEntry, ShareGroupDetail };
export type LagHistory = ConsumerGroupLagHistory;
export type OffsetReset = z.input<typeof offsetResetBody>;

const path = (group: string) => `/api/consumers/${encodeURIComponent(group)}`;

/** Groups asked per page as the list scrolls. */
export const GROUP_PAGE_SIZE = 200;

/** One page of the group list, with the totals the answer's headers say. */
export interface GroupPage {
  items: ConsumerGroupSummary[];
  /** Groups that match the search. */
  total: number;
  /** Groups the user may see, before it. */
  unfiltered: number;
}

/** The group list as the user scrolls it (see useTopicPages); refreshed every 30 s. */
export const useGroupPages = (cluster: string | null, query: Omit<GroupListQuery, "perPage" | "page">) =>
  useInfiniteQuery({
    queryKey: ["groups", cluster, query],
    queryFn: ({ pageParam }) => fetchGroupPage({ ...query, page: pageParam }),
    initialPageParam: 1,
    getNextPageParam: (last: GroupPage, all: GroupPage[]) => (all.length * GROUP_PAGE_SIZE < last.total ? all.length + 1 : undefined),
    placeholderData: keepPreviousData,
    refetchInterval: LIST_REFRESH_MS,
  });

/** A page of the list searched and sorted by the server (`GET /api/consumers?search=…&page=…`). */
async function fetchGroupPage(query: Omit<GroupListQuery, "perPage">): Promise<GroupPage> {
  const q = new URLSearchParams({ perPage: String(GROUP_PAGE_SIZE) });
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== "") q.set(k, String(v));
  const { body, headers } = await apiWithHeaders<ConsumerGroupSummary[]>(`/api/consumers?${q}`);
  const count = (name: string) => Number(headers.get(name) ?? body.length);
  return { items: body, total: count("X-Total-Count"), unfiltered: count("X-Unfiltered-Count") };
}
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
