/**
 * What the UI and the Python client show of a connector plugin beyond Connect's own
 * `{class, type, version}` (CLIENTS.md 4: the earlier product's catalogue): a display name, an
 * icon, a description, an author and a documentation link. Known plugins have an entry; any
 * other gets one derived from its class name.
 */
import type { PluginEntry } from "./schemas.ts";

export type { PluginEntry };

const KAFKA_DOCS = "https://kafka.apache.org/documentation/#connect";
const MM2_DOCS = "https://kafka.apache.org/documentation/#georeplication";

const KNOWN: Record<string, PluginEntry> = {
  "org.apache.kafka.connect.file.FileStreamSourceConnector": {
    name: "File Source",
    icon: "file.png",
    description: "Reads lines of a file on the worker's host into a topic (refused to non-admins by default: it reads the workers' disks)",
    author: "Apache Kafka",
    docs: KAFKA_DOCS,
    uiEnabled: true,
  },
  "org.apache.kafka.connect.file.FileStreamSinkConnector": {
    name: "File Sink",
    icon: "file.png",
    description:
      "Writes the records of topics to a file on the worker's host (refused to non-admins by default: it writes the workers' disks)",
    author: "Apache Kafka",
    docs: KAFKA_DOCS,
    uiEnabled: true,
  },
  "org.apache.kafka.connect.mirror.MirrorSourceConnector": {
    name: "MirrorMaker Source",
    icon: "kafka.png",
    description: "Replicates topics, their configs and ACLs from a source Kafka cluster",
    author: "Apache Kafka",
    docs: MM2_DOCS,
    uiEnabled: true,
  },
  "org.apache.kafka.connect.mirror.MirrorCheckpointConnector": {
    name: "MirrorMaker Checkpoint",
    icon: "kafka.png",
    description: "Translates the committed offsets of consumer groups from a source Kafka cluster",
    author: "Apache Kafka",
    docs: MM2_DOCS,
    uiEnabled: true,
  },
  "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector": {
    name: "MirrorMaker Heartbeat",
    icon: "kafka.png",
    description: "Emits heartbeats to check connectivity between two Kafka clusters",
    author: "Apache Kafka",
    docs: MM2_DOCS,
    uiEnabled: true,
  },
};

/** `com.acme.connect.JdbcSinkConnector` -> `Jdbc Sink`. */
function displayName(cls: string): string {
  const simple = cls.split(".").pop() ?? cls;
  return simple.replace(/Connector$/, "").replace(/([a-z0-9])([A-Z])/g, "$1 $2") || simple;
}

function author(cls: string): string {
  if (cls.startsWith("org.apache.kafka.")) return "Apache Kafka";
  const parts = cls.split(".");
  return parts.length > 2 ? parts.slice(0, 2).join(".") : "";
}

export function catalogueEntry(cls: string): PluginEntry {
  return KNOWN[cls] ?? { name: displayName(cls), icon: "connector.png", description: "", author: author(cls), docs: "", uiEnabled: true };
}

/** Connect's plugin list with the catalogue's fields added; Connect's own fields win. */
export function enrichPlugins(list: unknown): unknown {
  if (!Array.isArray(list)) return list;
  return list.map((p) =>
    p && typeof p === "object" && typeof (p as { class?: unknown }).class === "string"
      ? { ...catalogueEntry((p as { class: string }).class), ...(p as object) }
      : p,
  );
}
