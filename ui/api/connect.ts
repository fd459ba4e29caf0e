/**
 * Kafka Connect as the UI sees it: Loupe's list of Connect clusters and their workers, and
 * Connect's own REST API passed through /api/proxy-connect/{alias}/... (bodies as Connect
 * answers them). Connector names may hold spaces and slashes: every path segment is encoded.
 */
import {
  type ConfigDefinition,
  type ConfigInfos,
  type ConnectCluster,
  type ConnectorConfig,
  type ConnectorInfo,
  type ConnectorStatus,
  type ConnectPlugin,
  type ConnectWorker,
  createBody,
  flatConfig,
  type TaskStatus,
} from "../../src/domains/connect/schemas.ts";
import { ApiError, api } from "../session.ts";
import { checked } from "./check.ts";

export type {
  ConfigDefinition,
  ConfigInfos,
  ConnectCluster,
  ConnectorConfig,
  ConnectorInfo,
  ConnectorStatus,
  ConnectPlugin,
  ConnectWorker,
  TaskStatus,
};

/** `GET connectors?expand=status&expand=info`: name -> both. */
export type ConnectorsExpanded = Record<string, { status?: ConnectorStatus; info?: ConnectorInfo }>;

/** The proxy path of `segments` under an alias, each segment encoded. */
export function connectPath(alias: string, ...segments: Array<string | number>): string {
  return `/api/proxy-connect/${[alias, ...segments].map((s) => encodeURIComponent(String(s))).join("/")}`;
}

/**
 * Reads are asked again while Connect answers 409: its workers are rebalancing (right after a
 * connector is created or changed), which passes within seconds.
 */
export const whileRebalancing = {
  retry: (failures: number, error: Error) => error instanceof ApiError && error.status === 409 && failures < 15,
  retryDelay: 1_000,
};

export const connectKeys = {
  clusters: ["connect", "clusters"] as const,
  connectors: (alias: string) => ["connect", alias, "connectors"] as const,
  plugins: (alias: string) => ["connect", alias, "plugins"] as const,
  connector: (alias: string, name: string) => ["connect", alias, "connector", name] as const,
};

export const fetchClusters = () => api<ConnectCluster[]>("/api/connect/clusters");

export const fetchConnectors = (alias: string) => api<ConnectorsExpanded>(`${connectPath(alias, "connectors")}?expand=status&expand=info`);

export const fetchPlugins = (alias: string) => api<ConnectPlugin[]>(connectPath(alias, "connector-plugins"));

export const fetchStatus = (alias: string, name: string) => api<ConnectorStatus>(connectPath(alias, "connectors", name, "status"));

export const fetchConfig = (alias: string, name: string) => api<ConnectorConfig>(connectPath(alias, "connectors", name, "config"));

export function validateConfig(alias: string, plugin: string, config: ConnectorConfig): Promise<ConfigInfos> {
  return api<ConfigInfos>(connectPath(alias, "connector-plugins", plugin, "config", "validate"), {
    method: "PUT",
    body: JSON.stringify(config),
  });
}

export async function createConnector(alias: string, name: string, config: ConnectorConfig): Promise<ConnectorInfo> {
  const body = checked(createBody, { name, config });
  return api<ConnectorInfo>(connectPath(alias, "connectors"), { method: "POST", body: JSON.stringify(body) });
}

export async function saveConfig(alias: string, name: string, config: ConnectorConfig): Promise<ConnectorInfo> {
  return api<ConnectorInfo>(connectPath(alias, "connectors", name, "config"), {
    method: "PUT",
    body: JSON.stringify(checked(flatConfig, config)),
  });
}

/**
 * An action whose answer has no use: Connect answers 202 or 204, often with no body even where
 * the answer says JSON, which is success all the same.
 */
export async function quietly(path: string, init: RequestInit): Promise<void> {
  try {
    await api(path, init);
  } catch (e) {
    if (!(e instanceof SyntaxError)) throw e;
  }
}

/** The connector's and its tasks' actions. */
export function connectorAction(
  alias: string,
  name: string,
  action: "pause" | "resume" | "restart" | "delete" | { task: number },
): Promise<void> {
  if (action === "delete") return quietly(connectPath(alias, "connectors", name), { method: "DELETE" });
  if (action === "restart")
    return quietly(`${connectPath(alias, "connectors", name, "restart")}?includeTasks=true&onlyFailed=true`, { method: "POST" });
  if (typeof action === "object")
    return quietly(connectPath(alias, "connectors", name, "tasks", action.task, "restart"), { method: "POST" });
  return quietly(connectPath(alias, "connectors", name, action), { method: "PUT" });
}

/** A connector class's short name (`MirrorHeartbeatConnector`), as people call it. */
export const shortClass = (cls: string) => cls.slice(cls.lastIndexOf(".") + 1);

/** A state as a CSS class suffix: running, paused, failed, unassigned, restarting, stopped, up, down. */
export const stateClass = (state: string) => `state state-${state.toLowerCase().replace(/[^a-z]/g, "")}`;

export const newConnectorHref = (alias: string, plugin?: string) =>
  `/connect/${encodeURIComponent(alias)}/new${plugin ? `?plugin=${encodeURIComponent(plugin)}` : ""}`;

export const connectorHref = (alias: string, name: string, edit = false) =>
  `/connect/${encodeURIComponent(alias)}/connectors/${encodeURIComponent(name)}${edit ? "/edit" : ""}`;
