/**
 * The topic routes as the UI calls them: one topic, its records (read and written), its
 * partitions, the config names of the brokers, and deleting an empty consumer group. Types come
 * from the server's schemas (src/domains/topics/schemas.ts), never copied by hand.
 */
import { keepPreviousData, useInfiniteQuery } from "@tanstack/react-query";
import {
  type BrowseAnswer,
  type BrowsedRecord,
  type CreateTopicBody,
  createTopicBody,
  type PartitionsAnswer,
  type ProduceAnswer,
  type ProduceBody,
  produceBody,
  type Seek,
  type TopicListItemShape,
  type TopicListQuery,
  type TopicShape,
  type WriteFormat,
  type WriteFormats,
} from "../../src/domains/topics/schemas.ts";
import { api, apiWithHeaders } from "../session.ts";
import { checked } from "./check.ts";

export type { BrowseAnswer, BrowsedRecord, ProduceAnswer, ProduceBody, Seek, WriteFormat, WriteFormats };
export type TopicDetail = TopicShape;
export type TopicConfig = TopicShape["config"][number];
export type TopicItem = TopicListItemShape;

const path = (name: string) => `/api/topics/${encodeURIComponent(name)}`;

export const topicKey = (cluster: string | null, name: string) => ["topic", cluster, name] as const;
export const topicsKey = (cluster: string | null) => ["topics", cluster] as const;

export const fetchTopic = (name: string) => api<TopicDetail>(path(name));
export const fetchTopics = () => api<TopicItem[]>("/api/topics");

/** Topics asked per page as the list scrolls. */
export const TOPIC_PAGE_SIZE = 200;

/** One page of the topic list, with the totals the answer's headers say. */
export interface TopicPage {
  items: TopicItem[];
  /** Topics that match the search and the internal toggle. */
  total: number;
  /** Topics the user may see, before both. */
  unfiltered: number;
  /** Control topics among those. */
  controlTopics: number;
}

/**
 * The topic list as the user scrolls it: pages of TOPIC_PAGE_SIZE asked one after the other, the
 * last answer shown while a new search or order is asked.
 */
/** How often the topic and group lists are asked again while shown. */
export const LIST_REFRESH_MS = 10_000;

export const useTopicPages = (cluster: string | null, query: Omit<TopicListQuery, "perPage" | "page">) =>
  useInfiniteQuery({
    queryKey: [...topicsKey(cluster), query],
    queryFn: ({ pageParam }) => fetchTopicPage({ ...query, page: pageParam }),
    initialPageParam: 1,
    getNextPageParam: (last: TopicPage, all: TopicPage[]) => (all.length * TOPIC_PAGE_SIZE < last.total ? all.length + 1 : undefined),
    placeholderData: keepPreviousData,
    // Topics made outside Loupe reach the server's inventory within its refresh (5 s): the page asks again.
    refetchInterval: LIST_REFRESH_MS,
  });

/** A page of the list searched and sorted by the server (`GET /api/topics?search=…&page=…`). */
async function fetchTopicPage(query: Omit<TopicListQuery, "perPage">): Promise<TopicPage> {
  const q = new URLSearchParams({ perPage: String(TOPIC_PAGE_SIZE) });
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== "") q.set(k, String(v));
  const { body, headers } = await apiWithHeaders<TopicItem[]>(`/api/topics?${q}`);
  const count = (name: string) => Number(headers.get(name) ?? body.length);
  return { items: body, total: count("X-Total-Count"), unfiltered: count("X-Unfiltered-Count"), controlTopics: count("X-Control-Topics") };
}

/** What the message browser asks: a start, or positions to go on from. */
export interface BrowseParams {
  partition?: number;
  seek?: Seek;
  offset?: number;
  time?: number;
  after?: Array<{ partition: number; offset: number }>;
  before?: Array<{ partition: number; offset: number }>;
  limit?: number;
}

const positions = (list: Array<{ partition: number; offset: number }>) => list.map((p) => `${p.partition}:${p.offset}`).join(",");

export function browseRecords(name: string, p: BrowseParams, signal?: AbortSignal): Promise<BrowseAnswer> {
  const q = new URLSearchParams();
  if (p.partition !== undefined) q.set("partition", String(p.partition));
  if (p.seek) q.set("seek", p.seek);
  if (p.offset !== undefined) q.set("offset", String(p.offset));
  if (p.time !== undefined) q.set("time", String(p.time));
  if (p.after) q.set("after", positions(p.after));
  if (p.before) q.set("before", positions(p.before));
  if (p.limit !== undefined) q.set("limit", String(p.limit));
  return api<BrowseAnswer>(`${path(name)}/records?${q}`, signal ? { signal } : {});
}

export const writeFormatsKey = (cluster: string | null, name: string, key?: WriteFormat, value?: WriteFormat) =>
  ["topic-write-formats", cluster, name, key ?? null, value ?? null] as const;

export function fetchWriteFormats(name: string, chosen: { key?: WriteFormat; value?: WriteFormat }): Promise<WriteFormats> {
  const q = new URLSearchParams();
  if (chosen.key) q.set("keyFormat", chosen.key);
  if (chosen.value) q.set("valueFormat", chosen.value);
  return api<WriteFormats>(`${path(name)}/records/formats?${q}`);
}

export const produceRecords = async (name: string, body: ProduceBody) =>
  api<ProduceAnswer>(`${path(name)}/records`, { method: "POST", body: JSON.stringify(checked(produceBody, body)) });

export type CreateTopic = CreateTopicBody;

export const createTopic = async (body: CreateTopic) =>
  api<string>("/api/topics", { method: "POST", body: JSON.stringify(checked(createTopicBody, body)) });
export const deleteTopic = (name: string) => api<string>(path(name), { method: "DELETE" });

/** Deletes the partition's records below `offset`; the deletion finishes in the background. */
export const deleteRecordsUpTo = (name: string, partition: number, offset: number) =>
  api<string>(`${path(name)}/${partition}/${offset}`, { method: "DELETE" });

/** Sets one config of the topic; a null value resets it to its default. */
export const setTopicConfig = (name: string, key: string, value: string | null) =>
  api<string>(`/api/topics/config/${encodeURIComponent(name)}`, { method: "PUT", body: JSON.stringify({ configs: [{ key, value }] }) });

export const addPartitions = (name: string, partitions: number) =>
  api<PartitionsAnswer>(`${path(name)}/partitions`, {
    method: "PUT",
    body: JSON.stringify({ partitions }),
  });

/** The topic config names the cluster's brokers know (for the create dialog's config rows). */
export const topicConfigKeysKey = (cluster: string | null) => ["topic-config-keys", cluster] as const;
export const fetchTopicConfigKeys = () => api<string[]>("/api/configs/default/topics/keys");

export const deleteConsumerGroup = (group: string) => api<unknown>(`/api/consumers/${encodeURIComponent(group)}`, { method: "DELETE" });
