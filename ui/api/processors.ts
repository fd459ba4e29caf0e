/**
 * Stream processors as the UI sees them: the shapes of `/api/streams` (from the server's schemas,
 * src/domains/processors/schemas.ts), the calls, and who may change what. Ids are `lsql_<hex>`; names are free text, so
 * every path segment is encoded.
 */
import {
  createBody,
  type DeploymentState,
  type ProcessorAnswer,
  type ProcessorCreateBody,
  type ProcessorDone,
  type ProcessorList,
  type ProcessorOne,
} from "../../src/domains/processors/schemas.ts";
import { api } from "../session.ts";
import { checked } from "./check.ts";

export type { DeploymentState, ProcessorCreateBody };
export type Processor = ProcessorAnswer;

/** States move on their own (runners start, fail, rebalance): list and detail ask again this often. */
export const PROCESSORS_REFRESH_MS = 2_000;

export const processorKeys = {
  all: ["processors"] as const,
  list: (cluster: string | null) => ["processors", cluster, "list"] as const,
  one: (cluster: string | null, id: string) => ["processors", cluster, "one", id] as const,
};

export const processorHref = (id: string) => `/processors/${encodeURIComponent(id)}`;
export const NEW_PROCESSOR_HREF = "/processors/new";

export const fetchProcessors = () => api<ProcessorList>("/api/streams").then((r) => r.streams);

export const fetchProcessor = (id: string) => api<ProcessorOne>(`/api/streams/${encodeURIComponent(id)}`).then((r) => r.streams);

export const createProcessor = async (body: ProcessorCreateBody) =>
  api<Processor>("/api/streams", { method: "POST", body: JSON.stringify(checked(createBody, body)) });

export type ProcessorAction = "pause" | "resume" | { scale: number };

export function processorAction(id: string, action: ProcessorAction): Promise<ProcessorDone> {
  const path = typeof action === "string" ? action : `scale/${action.scale}`;
  return api<ProcessorDone>(`/api/streams/${encodeURIComponent(id)}/${path}`, { method: "PUT" });
}

export const deleteProcessor = (id: string, deleteChangelog: boolean) =>
  api<ProcessorDone>(`/api/streams/${encodeURIComponent(id)}${deleteChangelog ? "?deleteChangelog=true" : ""}`, { method: "DELETE" });

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
