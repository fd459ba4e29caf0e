/**
 * Configs of topics: described with their sources, defaults, documentation and synonyms,
 * changed key by key (IncrementalAlterConfigs).
 */

import {
  type Admin,
  ConfigResourceTypes,
  ConfigSources,
  ConfigTypes,
  type describeConfigsV4,
  IncrementalAlterConfigOperationTypes,
} from "@platformatic/kafka";
import { AppError } from "../errors.ts";
import type { KafkaConnection } from "./connection.ts";
import type { AlterConfigOp, ConfigEntry, ConfigSource, ConfigType } from "./types.ts";

type DescribeConfigsResponseConfig = describeConfigsV4.DescribeConfigsResponseConfig;
export type ConfigResourceType = (typeof ConfigResourceTypes)[keyof typeof ConfigResourceTypes];

const configSourceNames = new Map<number, ConfigSource>(
  Object.entries(ConfigSources)
    .filter(([k]) => k !== "TOPIC_CONFIG")
    .map(([k, v]) => [v as number, k as ConfigSource]),
);
const configTypeNames = new Map<number, ConfigType>(Object.entries(ConfigTypes).map(([k, v]) => [v as number, k as ConfigType]));

/** The configs of one resource (a topic, a broker), sorted by name. */
export async function describeConfigs(admin: Admin, resourceType: ConfigResourceType, name: string): Promise<ConfigEntry[]> {
  const [result] = await admin.describeConfigs({
    resources: [{ resourceType, resourceName: name }],
    includeSynonyms: true,
    includeDocumentation: true,
  });
  // A resource's own setting: a topic's override, a broker's per-broker dynamic value.
  const own: number = resourceType === ConfigResourceTypes.TOPIC ? ConfigSources.DYNAMIC_TOPIC_CONFIG : ConfigSources.DYNAMIC_BROKER_CONFIG;
  return (result?.configs ?? [])
    .map((c: DescribeConfigsResponseConfig) => {
      const inherited = c.synonyms.find((s) => s.source !== own);
      const source = configSourceNames.get(c.configSource) ?? "UNKNOWN";
      return {
        name: c.name,
        value: c.value ?? null,
        defaultValue: inherited?.value ?? null,
        isDefault: c.configSource !== own,
        source,
        type: configTypeNames.get(c.configType) ?? "UNKNOWN",
        readOnly: c.readOnly,
        sensitive: c.isSensitive,
        documentation: c.documentation ?? null,
        synonyms: c.synonyms.map((s) => ({ name: s.name, value: s.value ?? null, source: configSourceNames.get(s.source) ?? "UNKNOWN" })),
      };
    })
    .sort((a, b) => a.name.localeCompare(b.name));
}

export class ConfigOps {
  readonly #conn: KafkaConnection;

  constructor(conn: KafkaConnection) {
    this.#conn = conn;
  }

  describeTopic(name: string): Promise<ConfigEntry[]> {
    return this.#conn.call(`Cannot describe the configs of topic '${name}'`, () =>
      describeConfigs(this.#conn.admin, ConfigResourceTypes.TOPIC, name),
    );
  }

  /** IncrementalAlterConfigs: only the named keys change; a null value removes the override. */
  alterTopic(name: string, ops: AlterConfigOp[], opts: { validateOnly?: boolean } = {}): Promise<void> {
    return this.#conn.call(`Cannot change the configs of topic '${name}'`, async () => {
      if (ops.length === 0) return;
      await this.#conn.admin.incrementalAlterConfigs({
        validateOnly: opts.validateOnly ?? false,
        resources: [
          {
            resourceType: ConfigResourceTypes.TOPIC,
            resourceName: name,
            configs: ops.map((o) => {
              const op = o.op ?? (o.value === null ? "DELETE" : "SET");
              if (op === "DELETE") return { name: o.key, configOperation: IncrementalAlterConfigOperationTypes.DELETE };
              if (o.value === null) throw new AppError("BAD_REQUEST", `Config '${o.key}': ${op} needs a value`);
              return { name: o.key, configOperation: IncrementalAlterConfigOperationTypes[op], value: o.value };
            }),
          },
        ],
      });
    });
  }
}
