import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, type RefObject, useRef, useState } from "react";
import { type ConsumerGroupDetail, fetchGroup, type OffsetReset, resetOffsets } from "../api/consumers.ts";
import { deleteConsumerGroup } from "../api/topics.ts";
import { clusterOf, withCluster } from "../cluster.ts";
import { ConfirmDeleteDialog, DialogFooter, ErrorAlert, num, TableHead, Tile } from "../components.tsx";
import { number } from "../format.ts";
import { navigate } from "../router.ts";
import { DEFAULT_LAG_WINDOW, LAG_WINDOWS, LagChart, type LagWindow } from "./LagChart.tsx";

type GroupDetail = ConsumerGroupDetail;

type ResetTo = "earliest" | "latest" | "timestamp" | "explicit";
const RESET_CHOICES: Array<{ value: ResetTo; label: string }> = [
  { value: "earliest", label: "the earliest offset" },
  { value: "latest", label: "the latest offset" },
  { value: "timestamp", label: "the first record at or after a time" },
  { value: "explicit", label: "offsets I give per partition" },
];

/**
 * One group: its lag over time, members, per-partition offsets and lag (also in seconds), and
 * for writers, while the group has no member, the offset reset and deleting the group.
 */
export function ConsumerGroupPage({ id, location, canWrite }: { id: string; location: string; canWrite: boolean }) {
  const cluster = clusterOf(location);
  const params = new URLSearchParams(location.includes("?") ? location.slice(location.indexOf("?")) : "");
  const lagWindow = LAG_WINDOWS.find((w) => w.value === params.get("window"))?.value ?? DEFAULT_LAG_WINDOW;
  const setWindow = (w: LagWindow) => {
    const next = new URLSearchParams(params);
    if (w === DEFAULT_LAG_WINDOW) next.delete("window");
    else next.set("window", w);
    const query = next.toString();
    navigate(`/consumers/${encodeURIComponent(id)}${query ? `?${query}` : ""}`, { replace: true });
  };
  const key = ["group", cluster, id];
  const group = useQuery({ queryKey: key, queryFn: () => fetchGroup(id) });
  const g = group.data;
  const dialog = useRef<HTMLDialogElement>(null);
  const deleteDialog = useRef<HTMLDialogElement>(null);
  const empty = g !== undefined && (g.state === "Empty" || g.members.length === 0);
  const client = useQueryClient();
  const remove = useMutation({
    mutationFn: () => deleteConsumerGroup(id),
    onSuccess: async () => {
      deleteDialog.current?.close();
      client.removeQueries({ queryKey: key });
      await client.invalidateQueries({ queryKey: ["groups", cluster] });
      navigate(withCluster("/consumers", cluster));
    },
  });
  return (
    <section className="page">
      <h1>
        <span className="muted">Consumer group</span> {id}
      </h1>
      <ErrorAlert error={group.error} />
      {group.isPending && <p className="muted">Loading the group…</p>}
      {g && (
        <>
          <div className="tiles">
            <Tile label="State" value={g.state} text />
            <Tile label="Members" value={number.format(g.members.length)} />
            <Tile label="Total lag" value={number.format(g.lag)} />
          </div>
          {canWrite && (
            <div className="toolbar actions">
              <button type="button" onClick={() => dialog.current?.showModal()} disabled={!empty}>
                Reset offsets…
              </button>
              {empty ? (
                <button type="button" className="danger" onClick={() => deleteDialog.current?.showModal()}>
                  Delete group…
                </button>
              ) : (
                <span className="muted">Offsets can be reset, and the group deleted, when it has no active member.</span>
              )}
            </div>
          )}

          <LagChart group={id} cluster={cluster} window={lagWindow} onWindow={setWindow} />

          <h2>Offsets and lag</h2>
          <table aria-label="Offsets and lag">
            <TableHead columns={["Topic", num("Partition"), num("Committed"), num("End offset"), num("Lag"), num("Lag (s)"), "Client"]} />
            <tbody>
              {g.offsets.map((o) => (
                <tr key={`${o.topic}/${o.partition}`}>
                  <td>{o.topic}</td>
                  <td className="num">{o.partition}</td>
                  <td className="num">{number.format(o.currentOffset)}</td>
                  <td className="num">{number.format(o.logEndOffset)}</td>
                  <td className="num">{number.format(o.lag)}</td>
                  <td className="num">{o.lagSeconds === null ? "—" : number.format(o.lagSeconds)}</td>
                  <td>{o.clientId ?? "—"}</td>
                </tr>
              ))}
            </tbody>
          </table>

          <h2>Members</h2>
          {g.members.length === 0 ? (
            <p className="muted">No member is connected.</p>
          ) : (
            <table aria-label="Members">
              <TableHead columns={["Client", "Host", "Partitions"]} />
              <tbody>
                {g.members.map((m) => (
                  <tr key={m.memberId}>
                    <td>{m.clientId}</td>
                    <td>{m.host}</td>
                    <td>{m.assignments.map((a) => `${a.topic}-${a.partition}`).join(", ")}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          {canWrite && <ResetDialog dialog={dialog} group={id} offsets={g.offsets} queryKey={key} />}
          {canWrite && empty && (
            <ConfirmDeleteDialog
              dialog={deleteDialog}
              id="delete-group-title"
              title={`Delete ${id}`}
              typeName={{ name: id, noun: "group" }}
              label="Delete group"
              action={remove}
            >
              {`Its committed offsets are deleted with it (${number.format(new Set(g.offsets.map((o) => o.topic)).size)} topic${new Set(g.offsets.map((o) => o.topic)).size === 1 ? "" : "s"}): a consumer that joins the group later starts where its auto.offset.reset says. This cannot be undone.`}
            </ConfirmDeleteDialog>
          )}
        </>
      )}
    </section>
  );
}

function ResetDialog({
  dialog,
  group,
  offsets,
  queryKey,
}: {
  dialog: RefObject<HTMLDialogElement | null>;
  group: string;
  offsets: GroupDetail["offsets"];
  queryKey: unknown[];
}) {
  const topics = [...new Set(offsets.map((o) => o.topic))];
  const [to, setTo] = useState<ResetTo>("earliest");
  const client = useQueryClient();
  const reset = useMutation({
    mutationFn: (body: OffsetReset) => resetOffsets(group, body),
    onSuccess: async () => {
      await client.invalidateQueries({ queryKey });
      await client.invalidateQueries({ queryKey: ["lag-history"] });
      dialog.current?.close();
    },
  });
  function submit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    const chosen = form.getAll("topic").map(String);
    const scope = chosen.length > 0 && chosen.length < topics.length ? { topics: chosen } : {};
    if (to === "timestamp") {
      const at = Date.parse(String(form.get("at") ?? ""));
      if (Number.isNaN(at)) return;
      reset.mutate({ timestamp: at, ...scope });
    } else if (to === "explicit") {
      const wanted = new Set(chosen);
      reset.mutate({
        offsets: offsets
          .filter((o) => wanted.has(o.topic))
          .map((o) => ({ topic: o.topic, partition: o.partition, offset: Number(form.get(`offset:${o.topic}:${o.partition}`)) })),
      });
    } else reset.mutate({ to, ...scope });
  }
  return (
    <dialog ref={dialog} aria-labelledby="reset-title" onClose={() => reset.reset()}>
      <form method="dialog" onSubmit={submit} className="dialog-form">
        <h2 id="reset-title">Reset the offsets of {group}</h2>
        <fieldset>
          <legend>Move the committed offsets to</legend>
          {RESET_CHOICES.map((c) => (
            <label key={c.value} className="check">
              <input type="radio" name="to" value={c.value} checked={to === c.value} onChange={() => setTo(c.value)} />
              <span>{c.label}</span>
            </label>
          ))}
          {to === "timestamp" && (
            <label className="stacked">
              <span>Time (local)</span>
              <input type="datetime-local" name="at" step="1" required />
            </label>
          )}
          {to === "explicit" && (
            <div className="offset-inputs">
              <table aria-label="New offsets">
                <TableHead columns={["Topic", num("Partition"), num("End"), num("Offset")]} />
                <tbody>
                  {offsets.map((o) => (
                    <tr key={`${o.topic}/${o.partition}`}>
                      <td>{o.topic}</td>
                      <td className="num">{o.partition}</td>
                      <td className="num">{number.format(o.logEndOffset)}</td>
                      <td className="num">
                        <input
                          type="number"
                          name={`offset:${o.topic}:${o.partition}`}
                          aria-label={`New offset of ${o.topic} partition ${o.partition}`}
                          min={0}
                          step={1}
                          required
                          defaultValue={o.currentOffset}
                        />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </fieldset>
        <fieldset>
          <legend>Topics</legend>
          {topics.map((t) => (
            <label key={t} className="check">
              <input type="checkbox" name="topic" value={t} defaultChecked />
              <span>{t}</span>
            </label>
          ))}
        </fieldset>
        <DialogFooter
          error={reset.error}
          label="Reset offsets"
          busyLabel="Resetting…"
          busy={reset.isPending}
          onCancel={() => dialog.current?.close()}
        />
      </form>
    </dialog>
  );
}
