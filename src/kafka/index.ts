/** src/kafka: the only place that imports the Kafka client. See pool.ts and cluster.ts. */

export { KafkaCluster } from "./cluster.ts";
export { KAFKA_ERROR_CODES, toAppError as kafkaErrorToAppError } from "./errors.ts";
export type { GroupMember, GroupMemberOptions, GroupRecord } from "./group-member.ts";
export { createKafkaPool, type KafkaPool } from "./pool.ts";
export type * from "./types.ts";
