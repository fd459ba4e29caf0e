/**
 * Stream processors as the UI sees them: the shapes of `/api/streams` (src/domains/processors/
 * routes.ts), the calls, and who may change what. Ids are `lsql_<hex>`; names are free text, so
 * every path segment is encoded.
 */
import type { ProcessorFigures } from "../../src/domains/processors/types.ts";
import { api } from "../session.ts";

export type DeploymentState = "PENDING" | "RUNNING" | "PAUSED" | "FAILED" | "STOPPED";

export interface RunnerState {
  id: string;
  worker: string;
  state: string;
  errorMsg: string;
}

export interface Processor {
  id: string;
  name: string;
  user: string;
  sql: string;
  runners: number;
  deploymentState: DeploymentState;
  startTs: number;
  stopTs?: number;
  uptime: number;
  toTopic: string;
  fromTopics: string[];
  lastActionMsg?: string;
  deploymentErrorMsg?: string;
  runnerState: Record<string, RunnerState>;
  consumerGroup: string;
  operations: string[];
  figures: ProcessorFigures;
}

/** States move on their own (runners start, fail, rebalance): list and detail ask again this often. */
export const PROCESSORS_REFRESH_MS = 2_000;

export const processorKeys = {
  all: ["processors"] as const,
  list: (cluster: string | null) => ["processors", cluster, "list"] as const,
  one: (cluster: string | null, id: string) => ["processors", cluster, "one", id] as const,
};

export const processorHref = (id: string) => `/processors/${encodeURIComponent(id)}`;
export const NEW_PROCESSOR_HREF = "/processors/new";

export const fetchProcessors = () => api<{ streams: Processor[] }>("/api/streams").then((r) => r.streams);

export const fetchProcessor = (id: string) => api<{ streams: Processor }>(`/api/streams/${encodeURIComponent(id)}`).then((r) => r.streams);

export const createProcessor = (body: { name: string; sql: string; runners: number }) =>
  api<Processor>("/api/streams", { method: "POST", body: JSON.stringify(body) });

export type ProcessorAction = "pause" | "resume" | { scale: number };

export function processorAction(id: string, action: ProcessorAction): Promise<unknown> {
  const path = typeof action === "string" ? action : `scale/${action.scale}`;
  return api(`/api/streams/${encodeURIComponent(id)}/${path}`, { method: "PUT" });
}

export const deleteProcessor = (id: string, deleteChangelog: boolean) =>
  api(`/api/streams/${encodeURIComponent(id)}${deleteChangelog ? "?deleteChangelog=true" : ""}`, { method: "DELETE" });

/** The signed-in user as the processor rights need it. */
export interface Viewer {
  name: string | null;
  /** Holds write or admin: may create. */
  canWrite: boolean;
  /** Holds admin: may change anyone's processor. */
  admin: boolean;
  /** Holds a role other than nodata: may read the group's lag history. */
  canRead: boolean;
}

/** Only the owner or an admin pauses, resumes, scales or deletes (the API answers 403 otherwise). */
export const mayChange = (viewer: Viewer, p: Processor) => viewer.canWrite && (viewer.admin || p.user === viewer.name);

export const stateClass = (state: string) => `proc-state proc-state-${state.toLowerCase().replace(/[^a-z]/g, "")}`;
