import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, type RefObject, useRef, useState } from "react";
import { clusterOf } from "../cluster.ts";
import { DialogFooter, Tile } from "../components.tsx";
import { api } from "../session.ts";

interface GroupDetail {
  id: string;
  state: string;
  members: Array<{ memberId: string; clientId: string; host: string; assignments: Array<{ topic: string; partition: number }> }>;
  offsets: Array<{
    topic: string;
    partition: number;
    currentOffset: number;
    logEndOffset: number;
    lag: number;
    lagSeconds: number | null;
    clientId: string | null;
  }>;
  lag: number;
}

type ResetTo = "earliest" | "latest" | "timestamp";

const number = new Intl.NumberFormat("en-US");

/** One group: members, per-partition offsets and lag (also in seconds), and the offset reset for empty groups. */
export function ConsumerGroupPage({ id, location, canWrite }: { id: string; location: string; canWrite: boolean }) {
  const cluster = clusterOf(location);
  const key = ["group", cluster, id];
  const group = useQuery({ queryKey: key, queryFn: () => api<GroupDetail>(`/api/consumers/${encodeURIComponent(id)}`) });
  const g = group.data;
  const dialog = useRef<HTMLDialogElement>(null);
  const empty = g !== undefined && (g.state === "Empty" || g.members.length === 0);
  return (
    <section className="page">
      <h1>
        <span className="muted">Consumer group</span> {id}
      </h1>
      {group.error && (
        <p className="error" role="alert">
          {group.error.message}
        </p>
      )}
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
              {!empty && <span className="muted">Offsets can be reset when the group has no active member.</span>}
            </div>
          )}

          <h2>Offsets and lag</h2>
          <table aria-label="Offsets and lag">
            <thead>
              <tr>
                <th scope="col">Topic</th>
                <th scope="col" className="num">
                  Partition
                </th>
                <th scope="col" className="num">
                  Committed
                </th>
                <th scope="col" className="num">
                  End offset
                </th>
                <th scope="col" className="num">
                  Lag
                </th>
                <th scope="col" className="num">
                  Lag (s)
                </th>
                <th scope="col">Client</th>
              </tr>
            </thead>
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
              <thead>
                <tr>
                  <th scope="col">Client</th>
                  <th scope="col">Host</th>
                  <th scope="col">Partitions</th>
                </tr>
              </thead>
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
          {canWrite && <ResetDialog dialog={dialog} group={id} topics={[...new Set(g.offsets.map((o) => o.topic))]} queryKey={key} />}
        </>
      )}
    </section>
  );
}

function ResetDialog({
  dialog,
  group,
  topics,
  queryKey,
}: {
  dialog: RefObject<HTMLDialogElement | null>;
  group: string;
  topics: string[];
  queryKey: unknown[];
}) {
  const [to, setTo] = useState<ResetTo>("earliest");
  const client = useQueryClient();
  const reset = useMutation({
    mutationFn: (body: object) => api(`/api/consumers/${encodeURIComponent(group)}/offsets`, { method: "PUT", body: JSON.stringify(body) }),
    onSuccess: async () => {
      await client.invalidateQueries({ queryKey });
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
    } else reset.mutate({ to, ...scope });
  }
  return (
    <dialog ref={dialog} aria-labelledby="reset-title" onClose={() => reset.reset()}>
      <form method="dialog" onSubmit={submit} className="dialog-form">
        <h2 id="reset-title">Reset the offsets of {group}</h2>
        <fieldset>
          <legend>Move the committed offsets to</legend>
          {(["earliest", "latest", "timestamp"] as const).map((v) => (
            <label key={v} className="check">
              <input type="radio" name="to" value={v} checked={to === v} onChange={() => setTo(v)} />
              <span>{v === "timestamp" ? "the first record at or after a time" : `the ${v} offset`}</span>
            </label>
          ))}
          {to === "timestamp" && (
            <label className="stacked">
              <span>Time (local)</span>
              <input type="datetime-local" name="at" step="1" required />
            </label>
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
