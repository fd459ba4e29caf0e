import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useRef, useState } from "react";
import {
  dryRunRedrive,
  fetchRedrive,
  isOpen,
  mayChange,
  REDRIVE_REFRESH_MS,
  REDRIVE_RUNNING_REFRESH_MS,
  type RedriveAction,
  type RedriveDryRun,
  type RedriveJob,
  type RedriveViewer,
  redriveAction,
  redriveHref,
  redriveKeys,
} from "../api/redrive.ts";
import { clusterOf } from "../cluster.ts";
import { ActionResult, ErrorAlert, Link, num, TableHead, Tile } from "../components.tsx";
import { count } from "../format.ts";
import { replaceParams } from "../router.ts";
import { ResourceForm, when } from "./AccessList.tsx";
import { progressText, redriveStateClass, targetOf } from "./RedriveShared.ts";

type Counts = RedriveJob["counts"];

/**
 * One redrive job: its state (with Loupe's reason when it paused or failed it), what it copies
 * where, its progress (overall and per partition, refreshed every second while it runs) and its
 * counts; for its owner or an admin, the dry run, start, pause, resume and cancel. A job never
 * started is started only after a dry run has shown what it would write.
 */
export function RedriveDetail({ id, location, viewer }: { id: string; location: string; viewer: RedriveViewer }) {
  const cluster = clusterOf(location);
  const params = new URLSearchParams(location.includes("?") ? location.slice(location.indexOf("?")) : "");
  const one = useQuery({
    queryKey: redriveKeys.one(cluster, id),
    queryFn: () => fetchRedrive(id),
    refetchInterval: (q) => (q.state.data?.state === "RUNNING" ? REDRIVE_RUNNING_REFRESH_MS : REDRIVE_REFRESH_MS),
  });
  const dry = useMutation({ mutationFn: () => dryRunRedrive(id) });
  const job = one.data;
  const allowed = job !== undefined && mayChange(viewer, job);

  // Opened from the create form: the dry run first, once.
  const asked = useRef(false);
  useEffect(() => {
    if (params.get("dryrun") !== "1" || !allowed || asked.current) return;
    asked.current = true;
    dry.mutate();
    replaceParams(redriveHref(id), params, { dryrun: null });
  });

  const dryRun = (
    <>
      <ErrorAlert error={dry.error} />
      {dry.isPending && (
        <p className="muted" role="status">
          Dry run: reading what the job would copy (at most a minute)…
        </p>
      )}
      {dry.data && <DryRun result={dry.data} />}
    </>
  );

  return (
    <section className="page redrive redrive-detail">
      <p className="crumbs">
        <Link to="/redrives">Redrive jobs</Link>
      </p>
      <h1>
        <span className="muted">Redrive</span> {job?.name ?? id}{" "}
        {job && (
          <span className={redriveStateClass(job.state)} data-testid="redrive-state">
            {job.state}
          </span>
        )}
      </h1>
      <ErrorAlert error={one.error} />
      {one.isPending && <p className="muted">Loading the redrive job…</p>}
      {job && (
        <>
          {job.reason && (
            <p
              className={job.state === "FAILED" ? "error redrive-reason" : "redrive-reason"}
              role={job.state === "FAILED" ? "alert" : undefined}
            >
              {job.reason}
            </p>
          )}
          {allowed ? (
            <Actions job={job} cluster={cluster} dry={dry} />
          ) : (
            isOpen(job.state) && (
              <p className="muted">
                {viewer.canWrite ? "Its owner or an administrator can start, pause or cancel it." : "Changing a job needs the write role."}
              </p>
            )
          )}
          <dl className="redrive-facts">
            <dt>Source</dt>
            <dd className="mono">
              {job.topic}{" "}
              <span className="muted">
                ({job.progress.length} partition{job.progress.length === 1 ? "" : "s"})
              </span>
            </dd>
            <dt>Target</dt>
            <dd className="mono">{targetOf(job)}</dd>
            <dt>Filter</dt>
            <dd className="mono">{job.where ?? <span className="muted">every record</span>}</dd>
            <dt>Rate</dt>
            <dd>{count(job.ratePerSecond)} records per second at most</dd>
            <dt>Owner</dt>
            <dd>{job.owner}</dd>
            <dt>Created</dt>
            <dd>{when(job.createdAt)}</dd>
            <dt>Started</dt>
            <dd>{when(job.startedAt)}</dd>
            <dt>Finished</dt>
            <dd>{when(job.finishedAt)}</dd>
            <dt>Consumer group</dt>
            <dd className="mono">{job.consumerGroup}</dd>
          </dl>
          {/* Before the start the dry run is what matters; once the job runs, its progress. */}
          {job.startedAt === null && dryRun}
          <h2>Progress</h2>
          <div className="redrive-progress">
            <progress value={job.done} max={Math.max(job.total, 1)} aria-label="Records copied of the range" />
            <span data-testid="redrive-progress">{progressText(job)} records</span>
          </div>
          {job.startedAt !== null && (
            <>
              <CountTiles counts={job.counts} written="Written" />
              <TargetTable counts={job.counts} label="Written per target" written="Written" />
              {dryRun}
            </>
          )}
          <h2>Partitions</h2>
          <table aria-label="Progress per partition" className="redrive-table redrive-figures">
            <TableHead columns={[num("Partition"), num("From offset"), num("Up to offset"), num("Done"), num("Records")]} />
            <tbody>
              {job.progress.map((p) => (
                <tr key={p.partition}>
                  <td className="num">{p.partition}</td>
                  <td className="num">{count(p.from)}</td>
                  <td className="num">{count(p.to)}</td>
                  <td className="num">{count(p.done)}</td>
                  <td className="num">{count(p.total)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </section>
  );
}

function CountTiles({ counts, written }: { counts: Counts; written: string }) {
  return (
    <div className="tiles">
      <Tile label="Read" value={count(counts.read)} />
      <Tile label={written} value={count(counts.written)} />
      <Tile label="Left out by the filter" value={count(counts.filtered)} />
      <Tile label="Refused" value={count(counts.refused)} />
      <Tile label="Unroutable" value={count(counts.unroutable)} />
    </div>
  );
}

/** Per target topic: the records written (or that would be) and those refused (the owner may not write there). */
function TargetTable({ counts, label, written }: { counts: Counts; label: string; written: string }) {
  const targets = [...new Set([...Object.keys(counts.byTarget), ...Object.keys(counts.refusedByTarget)])].sort();
  if (targets.length === 0) return null;
  return (
    <table aria-label={label} className="redrive-table redrive-figures">
      <TableHead columns={["Target", num(written), num("Refused")]} />
      <tbody>
        {targets.map((t) => (
          <tr key={t}>
            <td className="mono">{t}</td>
            <td className="num">{count(counts.byTarget[t] ?? 0)}</td>
            <td className="num">{count(counts.refusedByTarget[t] ?? 0)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function DryRun({ result }: { result: RedriveDryRun }) {
  return (
    <section className="card redrive-dry" aria-labelledby="redrive-dry-title">
      <h2 id="redrive-dry-title">Dry run</h2>
      <p className="muted">
        What the job would do from where it is to its end, with its owner's rights now. Nothing was written.
        {!result.complete && " It read for its minute and stopped before the end: the counts are of the part read."}
      </p>
      <CountTiles counts={result.counts} written="Would write" />
      <TargetTable counts={result.counts} label="Dry run per target" written="Would write" />
      {result.sample.length > 0 && (
        <>
          <h3>Sample</h3>
          <div className="redrive-table-scroll">
            <table aria-label="Dry run sample" className="redrive-table">
              <TableHead columns={[num("Partition"), num("Offset"), "Target", "Outcome", "Key", "Value"]} />
              <tbody>
                {result.sample.map((s) => (
                  <tr key={`${s.partition}:${s.offset}`}>
                    <td className="num">{s.partition}</td>
                    <td className="num">{s.offset}</td>
                    <td className="mono">{s.target ?? <span className="muted">none</span>}</td>
                    <td>{OUTCOME[s.outcome]}</td>
                    <td className="mono redrive-cell">{s.key ?? <span className="muted">null</span>}</td>
                    <td className="mono redrive-cell">{s.value ?? <span className="muted">null</span>}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </section>
  );
}

const OUTCOME = { WRITE: "written", REFUSED: "refused", UNROUTABLE: "unroutable" } as const;

/** What each action does, said in the status line once it is done. */
const DONE: Record<RedriveAction, string> = {
  start: "Started: it copies at its rate, exactly once.",
  pause: "Paused: it commits what it holds and stops.",
  resume: "Resumed from where its last transaction left it.",
  cancel: "Cancelled: what it wrote stays written.",
};

function Actions({
  job,
  cluster,
  dry,
}: {
  job: RedriveJob;
  cluster: string | null;
  dry: { mutate: () => void; isPending: boolean; data: RedriveDryRun | undefined };
}) {
  const client = useQueryClient();
  const [done, setDone] = useState<string | null>(null);
  const [confirming, setConfirming] = useState(false);
  const act = useMutation({
    mutationFn: (action: RedriveAction) => redriveAction(job.id, action),
    onSuccess: () => client.invalidateQueries({ queryKey: redriveKeys.all }),
  });
  const run = (action: RedriveAction) => {
    setDone(null);
    act.mutate(action, { onSuccess: () => setDone(DONE[action]) });
  };
  if (!isOpen(job.state)) return <ActionResult error={act.error} done={done} />;
  const neverStarted = job.startedAt === null;
  const dryFirst = neverStarted && dry.data === undefined;
  return (
    <>
      <div className="toolbar actions redrive-actions">
        <button type="button" className={dryFirst ? undefined : "ghost"} onClick={() => dry.mutate()} disabled={dry.isPending}>
          {dry.isPending ? "Dry run…" : dry.data ? "Dry run again" : "Dry run"}
        </button>
        {job.state === "RUNNING" ? (
          <button type="button" onClick={() => run("pause")} disabled={act.isPending}>
            Pause
          </button>
        ) : neverStarted ? (
          <button type="button" onClick={() => run("start")} disabled={act.isPending || dryFirst} aria-describedby="redrive-dry-first">
            Start
          </button>
        ) : (
          <button type="button" onClick={() => run("resume")} disabled={act.isPending}>
            Resume
          </button>
        )}
        {dryFirst && (
          <span id="redrive-dry-first" className="muted">
            Start comes after a dry run: it shows what the job would write.
          </span>
        )}
        <span className="spacer" />
        <button type="button" className="danger" onClick={() => setConfirming(true)}>
          Cancel job…
        </button>
      </div>
      <ActionResult error={act.error} done={done} />
      {confirming && (
        <ResourceForm
          title={`Cancel the redrive ${job.name}`}
          wide={false}
          label="Cancel the job"
          busyLabel="Cancelling…"
          danger
          body={() => ({})}
          save={() => redriveAction(job.id, "cancel")}
          onSaved={async () => {
            await client.invalidateQueries({ queryKey: redriveKeys.one(cluster, job.id) });
            await client.invalidateQueries({ queryKey: redriveKeys.all });
            setDone(DONE.cancel);
          }}
          onClosed={() => setConfirming(false)}
        >
          <p>It stops for good: what it wrote stays written, the rest is not copied. A cancelled job cannot be started again.</p>
        </ResourceForm>
      )}
    </>
  );
}
