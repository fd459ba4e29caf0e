/** What the redrive list and a job's page both say of a job. */
import type { RedriveJob } from "../api/redrive.ts";
import { count } from "../format.ts";

/** A job's state as a pill, in the processors' colours (word and colour together). */
export const redriveStateClass = (state: string) => `proc-state proc-state-${state.toLowerCase()}`;

/** Where a job writes: its topic, or the header that names each record's. */
export const targetOf = (job: RedriveJob) => (job.target !== null ? job.target : `header ${job.targetHeader}`);

/** Done of total, with the share when there is any to copy. */
export const progressText = (job: RedriveJob) =>
  `${count(job.done)} of ${count(job.total)}${job.total > 0 ? ` (${Math.floor((job.done / job.total) * 100)}%)` : ""}`;
