/** The request and answer shapes of the consumer group routes. Imports only zod: the UI takes its types from here. */
import { z } from "zod";
import { listQueryFields } from "../shared/list-query.ts";
import { partitionLag } from "../shared/schemas.ts";
import { topicName } from "../topics/names.ts";

export const topicsField = z.array(topicName).max(1_000).optional();
/** One of: `to` earliest/latest, `timestamp` (epoch ms), or explicit `offsets`. */
export const offsetResetBody = z.union([
  z.object({ to: z.enum(["earliest", "latest"]), topics: topicsField }).strict(),
  z.object({ timestamp: z.number().int().min(0), topics: topicsField }).strict(),
  z
    .object({
      offsets: z
        .array(z.object({ topic: topicName, partition: z.number().int().min(0), offset: z.number().int().min(0) }).strict())
        .min(1)
        .max(100_000),
    })
    .strict(),
]);

export const summary = z.object({
  id: z.string(),
  state: z.string(),
  type: z.string().describe("the group's protocol: classic, consumer (KIP-848) or share (KIP-932)"),
  protocolType: z.string(),
  protocol: z.string(),
  members: z.number(),
  topics: z.array(z.string()),
  lag: z.number(),
});

/** What the group list sorts by (`orderBy`): the Consumers page's columns. */
export const GROUP_ORDER = ["name", "state", "members", "lag"] as const;

/** `GET /api/consumers`: every group without parameters; searched, sorted and paged with them. */
export const groupListQuery = z.object({
  ...listQueryFields,
  orderBy: z.enum(GROUP_ORDER).optional().describe("name (the default), state, members or lag (lag up to lag.cacheTtl old)"),
});
export type GroupListQuery = z.output<typeof groupListQuery>;
export const partitionRef = z.object({ topic: z.string(), partition: z.number() });
export const detail = z.object({
  id: z.string(),
  state: z.string(),
  protocolType: z.string(),
  protocol: z.string(),
  members: z.array(
    z.object({
      memberId: z.string(),
      groupInstanceId: z.string().nullable(),
      clientId: z.string(),
      host: z.string(),
      assignments: z.array(partitionRef),
    }),
  ),
  offsets: z.array(
    partitionLag.extend({
      lagSeconds: z.number().nullable(),
      memberId: z.string().nullable(),
      clientId: z.string().nullable(),
      host: z.string().nullable(),
    }),
  ),
  lag: z.number(),
});
/** A window such as `15m`, `1h`, `7d`, `90s` (or milliseconds); at most 30 days. */
export const windowQuery = z.object({
  window: z
    .string()
    .regex(/^\d{1,9}(ms|s|m|h|d)?$/, "window must be a duration such as 90s, 15m, 1h or 30d")
    .transform((v) => {
      const [, n, unit] = /^(\d+)(ms|s|m|h|d)?$/.exec(v)!;
      return Number(n) * { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[(unit ?? "ms") as "ms"];
    })
    .refine((ms) => ms >= 1_000 && ms <= 30 * 86_400_000, "window must be between 1s and 30d")
    .optional(),
});
export const lagPoint = z.object({
  t: z.number().int().describe("epoch ms of the end-offset sample, or of the bucket's start"),
  lag: z.number().int().describe("records still to read, all partitions (a bucket's maximum)"),
  lagMin: z.number().int().optional().describe("a bucket's smallest lag (downsampled answers only)"),
  lagSeconds: z.number().nullable().describe("age of the oldest unread record (estimate; a bucket's maximum); null when unknown"),
  topics: z.record(z.string(), z.number().int()).describe("lag per topic (a bucket's maximum per topic)"),
  topicLagSeconds: z
    .record(z.string(), z.number().nullable())
    .describe("age of each topic's oldest unread record (a bucket's maximum); null when unknown"),
});
export const lagHistoryAnswer = z.object({
  group: z.string(),
  windowMs: z.number().int(),
  intervalMs: z.number().int().describe("time between two points: the sampler's interval, or the bucket's width"),
  downsampled: z.boolean().describe("points are buckets (5 minutes past 6 hours, an hour past a day)"),
  points: z.array(lagPoint),
});
export const resetAnswer = z.object({ group: z.string(), offsets: z.array(partitionRef.extend({ offset: z.number() })) });

/** A share group (KIP-932): members share its partitions; each partition has a start offset instead of a committed one. */
export const shareDetail = z.object({
  id: z.string(),
  state: z.string(),
  type: z.literal("share"),
  groupEpoch: z.number(),
  assignmentEpoch: z.number(),
  assignor: z.string(),
  members: z.array(
    z.object({
      memberId: z.string(),
      rackId: z.string().nullable(),
      memberEpoch: z.number(),
      clientId: z.string(),
      host: z.string(),
      subscribedTopics: z.array(z.string()),
      assignments: z.array(partitionRef),
    }),
  ),
  offsets: z.array(
    partitionRef.extend({
      startOffset: z
        .number()
        .nullable()
        .describe("the share-partition start offset: the first record not yet acknowledged; null until initialised"),
      logEndOffset: z.number().nullable(),
      lag: z
        .number()
        .nullable()
        .describe("records from the start offset to the end not yet acknowledged (the broker's figure, else end minus start)"),
      members: z.number().describe("members the partition is assigned to (a share-partition may have several)"),
    }),
  ),
  lag: z.number(),
});
/** Topics named in a query parameter, comma-separated. */
export const shareOffsetsDeleteQuery = z.object({
  topics: z
    .string()
    .min(1)
    .transform((v) => [...new Set(v.split(","))])
    .pipe(z.array(topicName).min(1).max(1_000)),
});
export const groupConfigEntry = z.object({
  name: z.string(),
  value: z.string().nullable(),
  isDefault: z.boolean().describe("false when the group has its own value (GROUP_CONFIG), true for the broker's"),
  source: z.string(),
  readOnly: z.boolean(),
  sensitive: z.boolean(),
  documentation: z.string().nullable(),
});

export type ShareGroupDetail = z.output<typeof shareDetail>;
export type GroupConfigEntry = z.output<typeof groupConfigEntry>;
export type ConsumerGroupSummary = z.output<typeof summary>;
export type ConsumerGroupDetail = z.output<typeof detail>;
export type ConsumerGroupOffset = ConsumerGroupDetail["offsets"][number];
export type ConsumerGroupLagHistory = z.output<typeof lagHistoryAnswer>;
export type OffsetResetAnswer = z.output<typeof resetAnswer>;
