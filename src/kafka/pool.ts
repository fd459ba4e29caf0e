/**
 * The clusters Loupe knows, by name. Every service asks the pool for a cluster, so a second
 * cluster is a config entry, not a code change.
 */

import { AppError } from "../errors.ts";
import { KafkaCluster } from "./cluster.ts";
import type { ClusterStats, KafkaClusterConfig } from "./types.ts";

export interface KafkaPool {
  /** The named cluster; NOT_FOUND for a name the config does not have. */
  get(name: string): KafkaCluster;
  /** The cluster marked default, else the first. */
  default(): KafkaCluster;
  names(): string[];
  stats(): Array<ClusterStats & { cluster: string }>;
  close(): Promise<void>;
}

export function createKafkaPool(configs: KafkaClusterConfig[]): KafkaPool {
  if (configs.length === 0) throw new AppError("INTERNAL", "No Kafka cluster is configured");
  const clusters = new Map<string, KafkaCluster>();
  for (const c of configs) {
    if (clusters.has(c.name)) throw new AppError("INTERNAL", `Kafka cluster '${c.name}' is configured twice`);
    clusters.set(c.name, new KafkaCluster(c));
  }
  const defaultName = (configs.find((c) => c.default) ?? configs[0]!).name;
  return {
    get(name) {
      const cluster = clusters.get(name);
      if (!cluster) throw new AppError("NOT_FOUND", `Unknown Kafka cluster '${name}'`);
      return cluster;
    },
    default() {
      return clusters.get(defaultName)!;
    },
    names() {
      return [...clusters.keys()];
    },
    stats() {
      return [...clusters.values()].map((c) => ({ cluster: c.name, ...c.stats() }));
    },
    async close() {
      await Promise.all([...clusters.values()].map((c) => c.close()));
    },
  };
}
