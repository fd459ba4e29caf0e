/**
 * Redrive jobs as the UI sees them: the shapes of `/api/redrives` (from the server's schemas,
 * src/domains/redrive/schemas.ts), the calls, and who may change what. Ids are `rdr_<hex>`.
 */
import {
  type RedriveCreate,
  type RedriveDone,
  type RedriveDryRun,
  type RedriveJob,
  type RedriveList,
  type RedriveState,
  redriveCreate,
} from "../../src/domains/redrive/schemas.ts";
import { api } from "../session.ts";
import { checked } from "./check.ts";

export type { RedriveCreate, RedriveDryRun, RedriveJob, RedriveState };

/** A running job's progress moves every transaction (200 ms): its page asks again this often. */
export const REDRIVE_RUNNING_REFRESH_MS = 1_000;
/** The list, and a job that is not running (Loupe may pause or finish it on its own). */
export const REDRIVE_REFRESH_MS = 3_000;

export const redriveKeys = {
  all: ["redrives"] as const,
  list: (cluster: string | null) => ["redrives", cluster, "list"] as const,
  one: (cluster: string | null, id: string) => ["redrives", cluster, "one", id] as const,
};

export const redriveHref = (id: string) => `/redrives/${encodeURIComponent(id)}`;
export const NEW_REDRIVE_HREF = "/redrives/new";

const one = (id: string) => `/api/redrives/${encodeURIComponent(id)}`;

export const fetchRedrives = () => api<RedriveList>("/api/redrives").then((r) => r.redrives);
export const fetchRedrive = (id: string) => api<RedriveJob>(one(id));

/** Checked with the route's own schema first: the form shows the server's words without the round trip. */
export const createRedrive = async (body: RedriveCreate) =>
  api<RedriveJob>("/api/redrives", { method: "POST", body: JSON.stringify(checked(redriveCreate, body)) });

export const dryRunRedrive = (id: string) => api<RedriveDryRun>(`${one(id)}/dry-run`, { method: "POST" });

export type RedriveAction = "start" | "pause" | "resume" | "cancel";

export const redriveAction = (id: string, action: RedriveAction) => api<RedriveDone>(`${one(id)}/${action}`, { method: "PUT" });

/** The signed-in user as the redrive rights need it. */
export interface RedriveViewer {
  name: string;
  /** Holds write or admin on the cluster: may create. */
  canWrite: boolean;
  /** An admin changes anyone's job. */
  admin: boolean;
}

/** Only the owner or an admin dry-runs, starts, pauses, resumes or cancels (the API answers 403 otherwise). */
export const mayChange = (viewer: RedriveViewer, job: RedriveJob) => viewer.canWrite && (viewer.admin || job.owner === viewer.name);

/** A job that may still run: DONE and CANCELLED are for good. */
export const isOpen = (state: RedriveState) => state !== "DONE" && state !== "CANCELLED";
