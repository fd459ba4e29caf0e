/**
 * The pages of Loupe a notification concerns (no DOM here, so a unit test can hold it): the paths
 * are those of ui/api/connect.ts's connectorHref and ui/api/processors.ts's processorHref.
 */
import type { AlertNotification } from "../../src/domains/alerts/schemas.ts";
import { withCluster } from "../cluster.ts";

export const TOPIC_EVENTS = new Set([4000, 4002]);
/** Broker down, under-replicated and offline partitions, the controller quorum, leader imbalance. */
const BROKER_ALERTS = new Set([1000, 1005, 1006, 1007, 1014]);

/**
 * The pages of Loupe a notification concerns, on its cluster: the group and topic of a lag
 * condition, the topic of a topic event, the brokers of a broker, partition or quorum alert, the
 * Connect or registry page of theirs, a failed connector's or processor's own page. A deleted
 * topic or connector has no page left.
 */
export function linksOf(n: AlertNotification): Array<{ label: string; to: string }> {
  const cluster = n.labels.cluster || null;
  const at = (path: string) => withCluster(path, cluster);
  const out: Array<{ label: string; to: string }> = [];
  const { group, topic, instance, connectCluster, connector, processor } = n.labels;
  if (group) out.push({ label: `Consumer group ${group}`, to: at(`/consumers/${encodeURIComponent(group)}`) });
  if (topic && !/[*?]/.test(topic)) out.push({ label: `Topic ${topic}`, to: at(`/topics/${encodeURIComponent(topic)}`) });
  if (TOPIC_EVENTS.has(n.alertId) && instance) out.push({ label: `Topic ${instance}`, to: at(`/topics/${encodeURIComponent(instance)}`) });
  if (BROKER_ALERTS.has(n.alertId)) out.push({ label: "Brokers", to: at("/brokers") });
  if (n.alertId === 1002 || n.alertId === 3000) out.push({ label: "Connect", to: at("/connect") });
  if ((n.alertId === 3001 || n.alertId === 3002) && connectCluster && connector)
    out.push({
      label: `Connector ${connector}`,
      to: at(`/connect/${encodeURIComponent(connectCluster)}/connectors/${encodeURIComponent(connector)}`),
    });
  if (n.alertId === 5000 && processor)
    out.push({ label: `Processor ${processor}`, to: at(`/processors/${encodeURIComponent(processor)}`) });
  if (n.alertId === 1003) out.push({ label: "Schemas", to: at("/schemas") });
  return out;
}
