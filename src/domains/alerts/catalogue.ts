/**
 * Every alert setting Loupe knows (SPEC, alert identifiers): what it means, its group, whether
 * it ships enabled, whether Loupe can evaluate it, and the template its conditions follow.
 * Imports nothing: the browser may take it.
 */

export type AlertGroup = "License" | "Infrastructure" | "Consumers" | "Connect" | "Topics" | "Processors";
export type Severity = "INFO" | "LOW" | "MEDIUM" | "HIGH" | "CRITICAL";

export interface AlertDefinition {
  id: number;
  /** The Alertmanager `alertname` label. */
  name: string;
  description: string;
  category: AlertGroup;
  severity: Severity;
  /** Shipped state, until an admin sets it. */
  enabledByDefault: boolean;
  /** Why Loupe cannot evaluate it on any cluster; absent when it can (on some clusters only: see AlertSettings). */
  unavailable?: string;
  /** The anchor of its section in docs/alerts.md. */
  docs: string;
  conditionTemplate?: string;
  conditionRegex?: string;
}

/**
 * Consumer lag conditions: the SPEC's `lag >= N on group G and topic T`, also `lag-seconds >= N`
 * (the lag engine's estimate of how far behind in time), group and topic as patterns (`*` any
 * characters, `?` one), and an optional hold (`for 30s`, `for 5m`, `for 1h`) so a spike pages no one.
 */
export const LAG_TEMPLATE = "lag >= $Threshold-Number on group $Consumer-Group and topic $Topic-Name";
export const LAG_REGEX = "^(lag|lag-seconds) >= ([1-9][0-9]{0,15}) on group (\\S+) and topic (\\S+)(?: for ([1-9][0-9]{0,5})(s|m|h))?$";

const DOCS = "docs/alerts.md";

const def = (
  id: number,
  name: string,
  description: string,
  category: AlertGroup,
  severity: Severity,
  enabledByDefault: boolean,
  extra: Partial<AlertDefinition> = {},
): AlertDefinition => ({ id, name, description, category, severity, enabledByDefault, docs: `${DOCS}#${id}`, ...extra });

export const ALERTS: readonly AlertDefinition[] = [
  def(1, "LicenseInvalid", "License is invalid", "License", "HIGH", false, { unavailable: "Loupe has no licence" }),
  def(1000, "BrokerDown", "Broker is down", "Infrastructure", "CRITICAL", true),
  def(1001, "CoordinationNodeDown", "Coordination-service node is down", "Infrastructure", "HIGH", false),
  def(1002, "ConnectWorkerDown", "Connector worker is down", "Infrastructure", "HIGH", true),
  def(1003, "SchemaRegistryDown", "Schema registry is down", "Infrastructure", "HIGH", true),
  def(1004, "AlertmanagerDown", "Alert manager is down", "Infrastructure", "HIGH", true),
  def(1005, "UnderReplicatedPartitions", "Under replicated partitions", "Infrastructure", "HIGH", true),
  def(1006, "OfflinePartitions", "Partitions offline", "Infrastructure", "CRITICAL", true),
  def(1007, "ActiveControllers", "Active controllers", "Infrastructure", "HIGH", true),
  // 1008 to 1012 read the brokers' Prometheus endpoints, available on a cluster that names them
  // (broker-metrics.ts); 1013 reads DescribeLogDirs.
  def(1008, "MultipleBrokerVersions", "Multiple broker versions", "Infrastructure", "LOW", false),
  def(1009, "FileDescriptorsHigh", "File-open descriptors high capacity on brokers", "Infrastructure", "MEDIUM", false),
  def(1010, "RequestHandlerIdleLow", "Average percent the request handler is idle", "Infrastructure", "MEDIUM", false),
  def(1011, "FetchRequestsFailing", "Fetch requests failure", "Infrastructure", "MEDIUM", false),
  def(1012, "ProduceRequestsFailing", "Produce requests failure", "Infrastructure", "MEDIUM", false),
  def(1013, "BrokerDiskUsage", "Broker disk usage is greater than the cluster average", "Infrastructure", "MEDIUM", false),
  def(1014, "LeaderImbalance", "Leader imbalance", "Infrastructure", "LOW", false),
  def(2000, "ConsumerLag", "Consumer lag exceeded", "Consumers", "HIGH", true, {
    conditionTemplate: LAG_TEMPLATE,
    conditionRegex: LAG_REGEX,
  }),
  def(3000, "ConnectorDeleted", "Connector deleted", "Connect", "INFO", true),
  // Beyond the SPEC: what users of the other consoles ask for most, a failure sent to chat.
  def(3001, "ConnectorFailed", "Connector has failed", "Connect", "HIGH", true),
  def(3002, "ConnectorTaskFailed", "Connector task has failed", "Connect", "HIGH", true),
  def(4000, "TopicCreated", "Topic has been created", "Topics", "INFO", true),
  def(4001, "TopicDeleted", "Topic has been deleted", "Topics", "INFO", true),
  def(4002, "TopicDataDeleted", "Topic data has been deleted", "Topics", "INFO", true),
  def(5000, "ProcessorFailed", "Processor has failed", "Processors", "HIGH", true),
];

export function alertDefinition(id: number): AlertDefinition | undefined {
  return ALERTS.find((a) => a.id === id);
}
