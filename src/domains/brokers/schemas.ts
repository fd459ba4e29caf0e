/**
 * The brokers API's shapes (`/api/brokers`), declared once; the UI imports them. Zod only.
 */
import { z } from "zod";

const int = () => z.number().int();

export const logDir = z.object({
  path: z.string(),
  bytes: int().describe("bytes of the partition replicas held there"),
  partitions: int().describe("partition replicas held there"),
  totalBytes: int().nullable().describe("the disk's size; null when the broker does not say (before Kafka 3.3)"),
  usableBytes: int().nullable().describe("the disk's free space; null when the broker does not say"),
  error: z.string().nullable().describe("null while the dir is online"),
});

export const brokerView = z.object({
  id: int(),
  host: z.string(),
  port: int(),
  rack: z.string().nullable(),
  isController: z.boolean().describe("the active controller: the KRaft quorum's leader (else the controller Metadata names)"),
  logDirs: z.array(logDir).nullable().describe("null when they cannot be read (logDirsError says why)"),
  logDirsError: z.string().nullable(),
});
export type BrokerView = z.infer<typeof brokerView>;
export const brokerList = z.array(brokerView);

export const CONFIG_SOURCES = [
  "DYNAMIC_BROKER_CONFIG",
  "DYNAMIC_DEFAULT_BROKER_CONFIG",
  "STATIC_BROKER_CONFIG",
  "DEFAULT_CONFIG",
  "DYNAMIC_BROKER_LOGGER_CONFIG",
  "UNKNOWN",
] as const;

export const brokerConfig = z.object({
  name: z.string(),
  value: z.string().nullable().describe("null for a secret, or a config without a value"),
  source: z
    .enum(CONFIG_SOURCES)
    .describe("where the value comes from: this broker's dynamic config, the cluster-wide default, server.properties, Kafka's default"),
  type: z.string().describe("Kafka's type: BOOLEAN, STRING, INT, SHORT, LONG, DOUBLE, LIST, CLASS, PASSWORD"),
  sensitive: z.boolean(),
  dynamic: z
    .boolean()
    .describe("whether it can change while the broker runs (PUT /api/configs/brokers/{brokerId} or /api/configs/brokers)"),
  brokerValue: z.string().nullable().describe("this broker's own dynamic value, when set"),
  clusterDefault: z.string().nullable().describe("the cluster-wide dynamic default, when set"),
  staticValue: z.string().nullable().describe("the value in the broker's server.properties, when set"),
  defaultValue: z.string().nullable().describe("Kafka's own default"),
  documentation: z.string().nullable(),
});
export type BrokerConfigView = z.infer<typeof brokerConfig>;
export const brokerConfigList = z.array(brokerConfig);

export const brokerParams = z.object({
  brokerId: z
    .string()
    .regex(/^\d{1,10}$/, "brokerId must be a non-negative integer")
    .transform(Number)
    .pipe(z.number().int().max(2_147_483_647, "brokerId must be at most 2147483647")),
});
