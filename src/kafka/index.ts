/**
 * src/kafka: the only place that imports the Kafka client. See pool.ts and cluster.ts; each
 * concern has its own file (topics.ts, configs.ts, offsets.ts, groups.ts, reads.ts, produce.ts,
 * acls.ts, quotas.ts) over the cluster's shared connection (connection.ts).
 */

export { KafkaCluster } from "./cluster.ts";
export { type TopicOffsets, topicOffsets } from "./partition-plan.ts";
export { createKafkaPool, type KafkaPool } from "./pool.ts";
export {
  GroupMember,
  partitionForKey,
  TransactionalWriter,
  type TxnOffset,
  txnFailure,
} from "./processing.ts";
export type { ScramUser } from "./scram.ts";
export { type TxnHeader, TxnOutput } from "./txn-output.ts";
export type * from "./types.ts";
