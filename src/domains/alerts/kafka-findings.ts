/**
 * What the evaluation reads of a cluster's leadership: leader imbalance (1014) from the Metadata
 * request it already makes, and the KRaft controller quorum (1007) from one DescribeQuorum.
 */
import type { QuorumState } from "../../kafka/index.ts";
import type { RaiseNotification } from "./notifications.ts";

/**
 * A broker is imbalanced when it leads fewer of its preferred partitions than this share short
 * of all: Kafka's own `leader.imbalance.per.broker.percentage` default, past which a controller
 * with `auto.leader.rebalance.enable` moves the leaders back.
 */
export const IMBALANCE_PERCENT = 10;

/** How long a change of the quorum's leader stays raised: then it resolves by itself. */
export const LEADER_CHANGE_MS = 5 * 60_000;

interface Finding {
  fingerprint: string;
  raise: RaiseNotification;
  holdMs: number;
}

const base = (cluster: string) => ({ cluster, category: "Infrastructure", source: "loupe" });

/** One finding per broker up that leads more than IMBALANCE_PERCENT fewer of its preferred partitions than it could. */
export function imbalanceFindings(cluster: string, preferred: { broker: number; preferred: number; led: number }[]): Finding[] {
  return preferred
    .filter((b) => b.preferred > 0 && ((b.preferred - b.led) * 100) / b.preferred > IMBALANCE_PERCENT)
    .map((b) => {
      const off = Math.round(((b.preferred - b.led) * 100) / b.preferred);
      return {
        fingerprint: `cond/${cluster}/1014/${b.broker}`,
        holdMs: 0,
        raise: {
          ...base(cluster),
          alertId: 1014,
          instance: `broker ${b.broker}`,
          summary: `Broker ${b.broker} leads ${b.led} of the ${b.preferred} partitions it is the preferred leader of (${off} % imbalance, over ${IMBALANCE_PERCENT} %)`,
        },
      };
    });
}

/**
 * The controller quorum over the passes of one cluster: without a leader (1007, raised while it
 * lasts), and a change of leader (1007, raised for LEADER_CHANGE_MS after it was seen).
 */
export class QuorumWatch {
  /** The leader each cluster's quorum had at the last pass. */
  readonly #leaders = new Map<string, { id: number; epoch: number }>();
  /** The last change of leader seen per cluster. */
  readonly #changes = new Map<string, { at: number; from: number; to: number; epoch: number }>();

  /** What the quorum shows now; null: the cluster has no KRaft quorum (nothing to watch). */
  findings(cluster: string, quorum: QuorumState | null, now: number): Finding[] {
    if (!quorum) return [];
    const out: Finding[] = [];
    if (quorum.leaderId < 0) {
      out.push({
        fingerprint: `cond/${cluster}/1007/no-leader`,
        holdMs: 0,
        raise: {
          ...base(cluster),
          alertId: 1007,
          instance: cluster,
          summary: `The KRaft controller quorum has no leader (epoch ${quorum.leaderEpoch}, voters ${quorum.voters.map((v) => v.id).join(", ")})`,
        },
      });
    } else {
      const before = this.#leaders.get(cluster);
      if (before && before.id !== quorum.leaderId)
        this.#changes.set(cluster, { at: now, from: before.id, to: quorum.leaderId, epoch: quorum.leaderEpoch });
      this.#leaders.set(cluster, { id: quorum.leaderId, epoch: quorum.leaderEpoch });
    }
    const change = this.#changes.get(cluster);
    if (change && now - change.at < LEADER_CHANGE_MS)
      out.push({
        fingerprint: `cond/${cluster}/1007/leader-change/${change.epoch}`,
        holdMs: 0,
        raise: {
          ...base(cluster),
          alertId: 1007,
          instance: cluster,
          summary: `The KRaft controller quorum's leader changed from node ${change.from} to node ${change.to} (epoch ${change.epoch})`,
        },
      });
    return out;
  }
}
