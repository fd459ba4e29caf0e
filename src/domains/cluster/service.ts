import type { KafkaPool } from "../../kafka/index.ts";
import type { LagEngine } from "../../lag/engine.ts";
import type { ClusterOverview } from "./schemas.ts";

/** Partitions listed per kind of trouble; the count says how many there are in all. */
export const PARTITION_LIST_LIMIT = 50;

/**
 * The overview of one cluster: its Metadata (one request) and the total consumer lag from the
 * shared lag engine (the snapshot /metrics and the consumer pages use, so asking here costs
 * nothing while one is fresh). Lag that cannot be read leaves the rest of the answer intact.
 */
export class ClusterOverviewService {
  constructor(
    private readonly pool: KafkaPool,
    private readonly lag: LagEngine,
  ) {}

  async overview(cluster: string): Promise<ClusterOverview> {
    const kafka = this.pool.get(cluster);
    const [state, lag] = await Promise.all([
      kafka.describe(),
      this.lag.snapshot(cluster).then(
        (s) => ({ snapshot: s, error: null }),
        (e: unknown) => ({ snapshot: null, error: (e as Error).message }),
      ),
    ]);
    const listed = (list: ClusterOverview["offline"]["partitions"]) => ({
      count: list.length,
      partitions: list.slice(0, PARTITION_LIST_LIMIT),
    });
    return {
      cluster,
      clusterId: state.clusterId,
      controllerId: state.controllerId,
      brokers: state.brokers,
      topics: state.topics,
      internalTopics: state.internalTopics,
      partitions: state.partitions,
      underReplicated: listed(state.underReplicated),
      offline: listed(state.offline),
      lag: lag.snapshot
        ? {
            total: lag.snapshot.partitions.reduce((sum, p) => sum + p.lag, 0),
            groups: lag.snapshot.groups.length,
            takenAt: Math.round(lag.snapshot.takenAt),
          }
        : null,
      lagError: lag.error,
    };
  }
}
