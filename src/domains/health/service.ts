import { type Config, defaultCluster } from "../../config/schema.ts";
import type { KafkaPool } from "../../kafka/index.ts";

export interface ClusterHealth {
  connected: boolean;
  brokers?: number;
  controllerId?: number | null;
  latencyMs?: number;
  error?: string;
}

/** What health needs of the Kafka layer: the configured clusters and a bounded probe of each. */
export interface ClusterProbe {
  names(): string[];
  defaultName(): string;
  health(name: string): Promise<ClusterHealth>;
}

/** The probe over the configured clusters, each answered by its own bounded health check. */
export function kafkaProbe(pool: KafkaPool, config: Config): ClusterProbe {
  return {
    names: () => config.kafka.clusters.map((c) => c.name),
    defaultName: () => defaultCluster(config).name,
    health: (name) => pool.get(name).health(),
  };
}
