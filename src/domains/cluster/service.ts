import type { KafkaPool } from "../../kafka/index.ts";
import type { LagEngine, LagSnapshot } from "../../lag/engine.ts";
import type { TopicFilter } from "../topics/visibility.ts";
import type { ClusterOverview } from "./schemas.ts";

/** Partitions listed per kind of trouble; the count says how many there are in all. */
export const PARTITION_LIST_LIMIT = 50;

/**
 * The overview of one cluster: its Metadata (one request), its KRaft controller quorum (one
 * DescribeQuorum, answered by the active controller) and the total consumer lag from the
 * shared lag engine (the snapshot /metrics and the consumer pages use, so asking here costs
 * nothing while one is fresh). Lag or a quorum that cannot be read leaves the rest of the answer intact.
 *
 * A caller limited to some topics sees the brokers and the controller (they are the cluster's,
 * not a topic's), and every figure drawn from topics over its visible topics only: counts,
 * unhealthy partitions, lag, and each broker's leaders and replicas (a broker "leader of 46"
 * to someone who may see 3 topics would tell of the topics hidden from them).
 */
export class ClusterOverviewService {
  constructor(
    private readonly pool: KafkaPool,
    private readonly lag: LagEngine,
    /** The topics of Kafka's companions and Loupe's, counted as internal as the topic list marks them. */
    private readonly internalTopics?: { has(topic: string): boolean },
  ) {}

  readonly #isInternal = (topic: string) => this.internalTopics?.has(topic) === true;

  async overview(cluster: string, visible: TopicFilter = null): Promise<ClusterOverview> {
    const kafka = this.pool.get(cluster);
    const [state, lag, quorum] = await Promise.all([
      // One Metadata request; a scoped caller's figures are counted over its topics there.
      kafka.describe(this.#isInternal, visible),
      this.lag.snapshot(cluster).then(
        (s) => ({ snapshot: s, error: null }),
        (e: unknown) => ({ snapshot: null, error: (e as Error).message }),
      ),
      kafka.quorum().then(
        (q) => ({ quorum: q, error: null }),
        (e: unknown) => ({ quorum: null, error: (e as Error).message }),
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
      lag: lag.snapshot ? lagFigures(lag.snapshot, visible) : null,
      lagError: lag.error,
      quorum: quorum.quorum,
      quorumError: quorum.error,
    };
  }
}

/**
 * Lag summed over the visible partitions; the groups counted are those with a committed
 * offset on a visible topic (the snapshot holds no assignments, and asking for them would
 * cost a request per coordinator).
 */
function lagFigures(snapshot: LagSnapshot, visible: TopicFilter): NonNullable<ClusterOverview["lag"]> {
  const takenAt = Math.round(snapshot.takenAt);
  if (!visible) return { total: snapshot.partitions.reduce((sum, p) => sum + p.lag, 0), groups: snapshot.groups.length, takenAt };
  let total = 0;
  const groups = new Set<string>();
  for (const p of snapshot.partitions) {
    if (!visible(p.topic)) continue;
    total += p.lag;
    groups.add(p.group);
  }
  return { total, groups: groups.size, takenAt };
}
