/**
 * The answer of GET /api/cluster. Imports only zod: the UI takes its types from here.
 */
import { z } from "zod";

const int = () => z.number().int();

const partitionHealth = z.object({
  topic: z.string(),
  partition: int(),
  leader: int().describe("-1 when the partition has no leader"),
  replicas: z.array(int()),
  isr: z.array(int()),
  offlineReplicas: z.array(int()),
});

/** A count with the first partitions it counts: a sick cluster can have thousands. */
const partitionList = z.object({
  count: int(),
  partitions: z.array(partitionHealth).describe("the first ones by topic and partition, at most 50"),
});

const quorumReplica = z.object({
  id: int(),
  logEndOffset: int(),
  lag: int().describe("records behind the quorum's high watermark; 0: caught up"),
  lastFetchTimestamp: int().nullable().describe("epoch ms of its last fetch from the leader; null when unknown"),
  lastCaughtUpTimestamp: int().nullable().describe("epoch ms it was last caught up; null when unknown"),
});

export const quorumState = z.object({
  leaderId: int().describe("the active controller"),
  leaderEpoch: int(),
  highWatermark: int(),
  voters: z.array(quorumReplica),
  observers: z.array(quorumReplica).describe("brokers and controllers that follow the metadata log without voting"),
});
export type QuorumView = z.infer<typeof quorumState>;

export const clusterOverview = z.object({
  cluster: z.string().describe("the configured name (`x-service-cluster`)"),
  clusterId: z.string().nullable(),
  controllerId: int().describe("the controller as Metadata names it; -1 when unknown"),
  brokers: z.array(
    z.object({
      id: int(),
      host: z.string(),
      port: int(),
      rack: z.string().nullable(),
      leaders: int().describe("partitions it leads"),
      replicas: int().describe("replicas it holds"),
    }),
  ),
  topics: int().describe("topics, internal ones apart"),
  internalTopics: int(),
  partitions: int().describe("partitions of every topic, internal ones included"),
  underReplicated: partitionList,
  offline: partitionList,
  lag: z
    .object({
      total: int().describe("the sum of every group's lag over every partition it committed"),
      groups: int(),
      takenAt: int().describe("epoch ms of the lag snapshot"),
    })
    .nullable()
    .describe("null when the lag could not be read (lagError says why)"),
  lagError: z.string().nullable(),
  quorum: quorumState
    .nullable()
    .describe(
      "the KRaft controller quorum (DescribeQuorum); null for a cluster without one, or when it cannot be read (quorumError says why)",
    ),
  quorumError: z.string().nullable(),
});

export type ClusterOverview = z.infer<typeof clusterOverview>;
