import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type RefObject, useRef, useState } from "react";
import {
  deleteProcessor,
  fetchProcessor,
  mayChange,
  PROCESSORS_REFRESH_MS,
  type Processor,
  type ProcessorAction,
  processorAction,
  processorKeys,
  stateClass,
  type Viewer,
} from "../api/processors.ts";
import { clusterOf } from "../cluster.ts";
import { ActionResult, ConfirmDeleteDialog, ErrorAlert, Link, TableHead, Tile } from "../components.tsx";
import { count, duration } from "../format.ts";
import { navigate } from "../router.ts";
import { LagChart, type LagWindow } from "./LagChart.tsx";

/**
 * One stream processor: its state (its error first when FAILED), figures, the drawing of what
 * it does, its runners, its group's lag over time and its program; for its owner or an admin,
 * pause, resume, scale and delete. Every refusal is shown beside the buttons that caused it.
 */
export function ProcessorDetail({ id, location, viewer }: { id: string; location: string; viewer: Viewer }) {
  const cluster = clusterOf(location);
  const one = useQuery({
    queryKey: processorKeys.one(cluster, id),
    queryFn: () => fetchProcessor(id),
    refetchInterval: PROCESSORS_REFRESH_MS,
  });
  const [lagWindow, setLagWindow] = useState<LagWindow>("15m");
  const p = one.data;
  return (
    <section className="page processors proc-detail">
      <p className="crumbs">
        <Link to="/processors">Stream processors</Link>
      </p>
      <h1>
        <span className="muted">Stream processor</span> {p?.name ?? id}{" "}
        {p && (
          <span className={stateClass(p.deploymentState)} data-testid="proc-state">
            {p.deploymentState}
          </span>
        )}
      </h1>
      <ErrorAlert error={one.error} />
      {one.isPending && <p className="muted">Loading the stream processor…</p>}
      {p && (
        <>
          {p.deploymentState === "FAILED" && (
            <div className="proc-failure" role="alert">
              <h2>The processor failed</h2>
              <p className="mono">{p.deploymentErrorMsg || failedRunnerMessage(p) || "A runner failed without a message."}</p>
              <p>
                {mayChange(viewer, p)
                  ? "Resume starts its runners again from the last committed record."
                  : "Its owner or an administrator can resume it."}
              </p>
            </div>
          )}
          {mayChange(viewer, p) && <Actions p={p} cluster={cluster} />}
          {p.lastActionMsg && (
            <p className="muted" data-testid="last-action">
              Last action: {p.lastActionMsg}
            </p>
          )}
          <div className="tiles">
            <Tile label="Records in" value={count(p.figures.recordsIn)} />
            <Tile label="Records out" value={count(p.figures.recordsOut)} />
            <Tile label="In per second" value={count(p.figures.inPerSec)} />
            <Tile label="Out per second" value={count(p.figures.outPerSec)} />
            <Tile label="Lag" value={count(p.figures.lag)} />
            <Tile label="Failed records" value={count(p.figures.failed)} />
            <Tile label="Late records" value={count(p.figures.late)} />
            <Tile label="Uptime" value={p.deploymentState === "RUNNING" ? duration(p.uptime) : "—"} text />
            <Tile label="Owner" value={p.user} text />
          </div>
          <h2>Topology</h2>
          <Topology p={p} />
          <h2>Runners</h2>
          <Runners p={p} />
          <h2>Lag</h2>
          {viewer.canRead ? (
            <>
              <p className="muted proc-group">
                Consumer group{" "}
                <Link to={`/consumers/${encodeURIComponent(p.consumerGroup)}${cluster ? `?cluster=${encodeURIComponent(cluster)}` : ""}`}>
                  {p.consumerGroup}
                </Link>
              </p>
              <LagChart group={p.consumerGroup} cluster={cluster} window={lagWindow} onWindow={setLagWindow} />
            </>
          ) : (
            <p className="muted proc-group" data-testid="lag-hidden">
              Consumer group <span className="mono">{p.consumerGroup}</span>. Its lag history needs the read role.
            </p>
          )}
          <h2>Program</h2>
          <pre className="proc-sql">{p.sql}</pre>
        </>
      )}
    </section>
  );
}

function failedRunnerMessage(p: Processor): string | undefined {
  return Object.values(p.runnerState).find((r) => r.state === "FAILED" && r.errorMsg)?.errorMsg;
}

/** What the processor does, drawn: its source, each operation, its target, joined by arrows. */
function Topology({ p }: { p: Processor }) {
  const steps = [
    ...p.fromTopics.map((t) => ({ kind: "topic", label: t, note: "source" })),
    // Each kind of operation has its colour: `proc-op-filter`, `proc-op-aggregate`...
    ...p.operations.map((o) => ({ kind: `op proc-op-${o.split(" ")[0]!.toLowerCase()}`, label: o, note: "" })),
    { kind: "topic", label: p.toTopic, note: "target" },
  ];
  return (
    <ol className="proc-topology" aria-label="Topology" data-testid="topology">
      {steps.map((s, i) => (
        // The same operation may appear twice: the position is part of the key.
        // biome-ignore lint/suspicious/noArrayIndexKey: steps are fixed for a processor
        <li key={`${i} ${s.label}`} className={`proc-node proc-node-${s.kind}`}>
          {i > 0 && <span className="proc-arrow" aria-hidden="true" />}
          <span className="proc-box">
            {s.note && <span className="proc-note">{s.note}</span>}
            <span className="proc-box-label">{s.label}</span>
          </span>
        </li>
      ))}
    </ol>
  );
}

function Runners({ p }: { p: Processor }) {
  const runners = Object.values(p.runnerState).sort((a, b) => a.id.localeCompare(b.id, undefined, { numeric: true }));
  if (runners.length === 0) return <p className="muted">No runner reports yet: they appear once they start.</p>;
  return (
    <table aria-label="Runner states" className="proc-runners-table">
      <TableHead columns={["Runner", "Worker", "State", "Error"]} />
      <tbody>
        {runners.map((r) => (
          <tr key={r.id}>
            <td className="mono">{r.id}</td>
            <td className="mono">{r.worker || "—"}</td>
            <td>
              <span className={stateClass(r.state)}>{r.state}</span>
            </td>
            <td className={r.errorMsg ? "mono error" : undefined}>{r.errorMsg || "—"}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Actions({ p, cluster }: { p: Processor; cluster: string | null }) {
  const client = useQueryClient();
  const deleteDialog = useRef<HTMLDialogElement>(null);
  const [runners, setRunners] = useState(String(p.runners));
  const [done, setDone] = useState<string | null>(null);
  const act = useMutation({
    mutationFn: (action: ProcessorAction) => processorAction(p.id, action),
    onSuccess: () => client.invalidateQueries({ queryKey: processorKeys.all }),
  });
  const run = (action: ProcessorAction, said: string) => {
    setDone(null);
    act.mutate(action, { onSuccess: () => setDone(said) });
  };
  const scaleTo = Number(runners);
  const scaleValid = /^\d+$/.test(runners) && scaleTo >= 1;
  const paused = p.deploymentState === "PAUSED" || p.deploymentState === "FAILED" || p.deploymentState === "STOPPED";
  return (
    <>
      <div className="toolbar actions proc-actions">
        {paused ? (
          <button type="button" onClick={() => run("resume", "Resumed: its runners start again.")} disabled={act.isPending}>
            Resume
          </button>
        ) : (
          <button
            type="button"
            onClick={() => run("pause", "Paused: its runners commit what they hold and stop.")}
            disabled={act.isPending}
          >
            Pause
          </button>
        )}
        <form
          className="proc-scale"
          onSubmit={(e) => {
            e.preventDefault();
            if (scaleValid) run({ scale: scaleTo }, `Scaled to ${scaleTo} runner${scaleTo === 1 ? "" : "s"}.`);
          }}
        >
          <label className="search">
            <span>Runners</span>
            <input type="number" min={1} value={runners} onChange={(e) => setRunners(e.target.value)} className="proc-runners" />
          </label>
          <button type="submit" className="ghost" disabled={act.isPending || !scaleValid || scaleTo === p.runners}>
            Scale
          </button>
        </form>
        <span className="spacer" />
        <button type="button" className="danger" onClick={() => deleteDialog.current?.showModal()}>
          Delete…
        </button>
      </div>
      <ActionResult error={act.error} done={done} />
      <DeleteProcessorDialog dialog={deleteDialog} p={p} cluster={cluster} />
    </>
  );
}

/** Deleting stops the runners and removes the consumer group; an aggregation may also drop its changelog. */
function DeleteProcessorDialog({
  dialog,
  p,
  cluster,
}: {
  dialog: RefObject<HTMLDialogElement | null>;
  p: Processor;
  cluster: string | null;
}) {
  const client = useQueryClient();
  const [changelog, setChangelog] = useState(false);
  const aggregates = p.operations.some((o) => o.startsWith("AGGREGATE"));
  const remove = useMutation({
    mutationFn: () => deleteProcessor(p.id, aggregates && changelog),
    onSuccess: async () => {
      client.removeQueries({ queryKey: processorKeys.one(cluster, p.id) });
      await client.invalidateQueries({ queryKey: processorKeys.all });
      dialog.current?.close();
      navigate("/processors");
    },
  });
  return (
    <ConfirmDeleteDialog dialog={dialog} id="delete-processor-title" title={`Delete ${p.name}`} label="Delete processor" action={remove}>
      Its runners stop and its consumer group {p.consumerGroup} is removed; the topics it reads and writes stay. This cannot be undone.
      {aggregates && (
        <label className="check proc-changelog">
          <input type="checkbox" checked={changelog} onChange={(e) => setChangelog(e.target.checked)} />
          <span>Also delete its changelog topic (the aggregation's saved state)</span>
        </label>
      )}
    </ConfirmDeleteDialog>
  );
}
