/**
 * Which topics a caller may see, as the services take it: a predicate, or null when every topic
 * is visible. Null is the fast path: an unrestricted identity's lists are built exactly as
 * before, without a single extra check per topic. Imports no HTTP: the route handlers make
 * the filter from the session (scope-filter.ts) and hand it on.
 */
import { forbidden } from "../../errors.ts";

export type TopicFilter = ((topic: string) => boolean) | null;

/** Whether `filter` lets the topic through (null lets everything through). */
export const isVisible = (filter: TopicFilter, topic: string): boolean => filter === null || filter(topic);

/** The same words the access check uses for a topic named in a path. */
export const topicOutsideScope = (topic: string) => forbidden(`Topic '${topic}' is outside your scope`);

export const groupOutsideScope = (group: string) => forbidden(`Consumer group '${group}' is outside your scope`);

/** 403 naming the first of `topics` the filter refuses; nothing when all pass. */
export function requireTopics(filter: TopicFilter, topics: Iterable<string>): void {
  if (filter === null) return;
  for (const t of topics) if (!filter(t)) throw topicOutsideScope(t);
}
