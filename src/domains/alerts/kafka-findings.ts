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

/**
 * A voter of the controller quorum that has not fetched from the leader for this long is down
 * (1001), unless `alerts.controllerSilence` says otherwise: many times the controllers' fetch
 * timeout (`controller.quorum.fetch.timeout.ms`, 2 s).
 */
export const VOTER_SILENT_MS = 30_000;

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
 * The voters of the controller quorum (KRaft's coordination service, where ZooKeeper was) that do
 * not follow its leader (1001): no fetch for VOTER_SILENT_MS, or none known for as long. Timestamps are the
 * leader's: they are compared with the newest fetch any replica made (brokers fetch all the
 * time), not with Loupe's clock, so clocks that disagree raise nothing. A quorum of one voter,
 * or without a leader (1007 says so), finds nothing here.
 */
export function voterFindings(cluster: string, quorum: QuorumState | null, silentMs = VOTER_SILENT_MS): Finding[] {
  if (!quorum || quorum.leaderId < 0) return [];
  const replicas = [...quorum.voters, ...quorum.observers];
  const newest = Math.max(...replicas.map((r) => r.lastFetchTimestamp ?? Number.NEGATIVE_INFINITY));
  if (!Number.isFinite(newest)) return [];
  return quorum.voters
    .filter((v) => v.id !== quorum.leaderId && (v.lastFetchTimestamp === null || newest - v.lastFetchTimestamp > silentMs))
    .map((v) => ({
      fingerprint: `cond/${cluster}/1001/${v.id}`,
      // No fetch known: the leader may be new. Raised once that has lasted as long as a silence.
      holdMs: v.lastFetchTimestamp === null ? silentMs : 0,
      raise: {
        ...base(cluster),
        alertId: 1001,
        instance: `controller ${v.id}`,
        summary:
          v.lastFetchTimestamp === null
            ? `Controller ${v.id} of the KRaft quorum has fetched nothing from the leader (node ${quorum.leaderId}) in ${silentMs / 1000} s`
            : `Controller ${v.id} of the KRaft quorum has not fetched from the leader (node ${quorum.leaderId}) for ${Math.round((newest - v.lastFetchTimestamp) / 1000)} s (${v.lag} records behind)`,
      },
    }));
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
