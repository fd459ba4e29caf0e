import { useMutation, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, type RefObject, useEffect, useRef, useState } from "react";
import { withCluster } from "../cluster.ts";
import { ConfirmDeleteDialog, DialogFooter } from "../components.tsx";
import { navigate } from "../router.ts";
import { api } from "../session.ts";
import { compactedOnly, fetchTopic, number, type TopicDetail, topicKey } from "./TopicDetail.tsx";

/** Config presets a platform engineer reaches for; the broker's defaults otherwise. */
const PRESETS: Record<string, { label: string; configs: Record<string, string> }> = {
  none: { label: "Broker defaults", configs: {} },
  compacted: { label: "Compacted (latest value per key)", configs: { "cleanup.policy": "compact" } },
  day: { label: "Kept one day", configs: { "retention.ms": "86400000" } },
  week: { label: "Kept one week", configs: { "retention.ms": "604800000" } },
};

/** Create a topic: name, partitions, replication and a config preset; the API's message on refusal. */
export function CreateTopicDialog({ dialog, cluster }: { dialog: RefObject<HTMLDialogElement | null>; cluster: string | null }) {
  const client = useQueryClient();
  const create = useMutation({
    mutationFn: (body: object) => api<string>("/api/topics", { method: "POST", body: JSON.stringify(body) }),
    onSuccess: async (_text, body) => {
      await client.invalidateQueries({ queryKey: ["topics", cluster] });
      dialog.current?.close();
      const name = (body as { topicName: string }).topicName;
      navigate(withCluster(`/topics/${encodeURIComponent(name)}`, cluster));
    },
  });
  function submit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    const preset = PRESETS[String(form.get("preset"))] ?? PRESETS.none!;
    const number = (k: string) => (String(form.get(k) ?? "") === "" ? undefined : Number(form.get(k)));
    create.mutate({
      topicName: String(form.get("name") ?? "").trim(),
      partitions: number("partitions"),
      replication: number("replication"),
      configs: preset.configs,
    });
  }
  return (
    <dialog ref={dialog} aria-labelledby="create-title" onClose={() => create.reset()}>
      <form onSubmit={submit} className="dialog-form">
        <h2 id="create-title">Create a topic</h2>
        <label className="stacked">
          <span>Name</span>
          <input name="name" required maxLength={249} autoComplete="off" />
        </label>
        <label className="stacked">
          <span>Partitions (empty: the broker's default)</span>
          <input name="partitions" type="number" min={1} max={100000} />
        </label>
        <label className="stacked">
          <span>Replication factor (empty: the broker's default)</span>
          <input name="replication" type="number" min={1} max={32767} />
        </label>
        <label className="stacked">
          <span>Configuration</span>
          <select name="preset" defaultValue="none">
            {Object.entries(PRESETS).map(([k, p]) => (
              <option key={k} value={k}>
                {p.label}
              </option>
            ))}
          </select>
        </label>
        <DialogFooter
          error={create.error}
          label="Create"
          busyLabel="Creating…"
          busy={create.isPending}
          onCancel={() => dialog.current?.close()}
        />
      </form>
    </dialog>
  );
}

/** Delete a topic: its name must be typed to confirm. */
export function DeleteTopicDialog({
  dialog,
  cluster,
  name,
}: {
  dialog: RefObject<HTMLDialogElement | null>;
  cluster: string | null;
  name: string;
}) {
  const client = useQueryClient();
  const remove = useMutation({
    mutationFn: () => api<string>(`/api/topics/${encodeURIComponent(name)}`, { method: "DELETE" }),
    onSuccess: async () => {
      await client.invalidateQueries({ queryKey: ["topics", cluster] });
      dialog.current?.close();
      navigate(withCluster("/topics", cluster));
    },
  });
  return (
    <ConfirmDeleteDialog
      dialog={dialog}
      id="delete-title"
      title={`Delete ${name}`}
      typeName={{ name, noun: "topic" }}
      label="Delete topic"
      action={remove}
    >
      Its records are deleted with it, for every consumer. This cannot be undone.
    </ConfirmDeleteDialog>
  );
}

/** How long the dialog waits for the broker to move the start offsets before saying so. */
const DELETION_WAIT_MS = 30_000;
const POLL_MS = 500;

type Deletion =
  | { phase: "form" }
  | { phase: "deleting"; done: number; total: number; partition: number }
  | { phase: "waiting"; total: number }
  | { phase: "done"; starts: Array<{ partition: number; begin: number; target: number }>; late: boolean }
  | { phase: "failed"; message: string; partition: number };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Delete a partition's records up to an offset, or every partition's. The API answers once the
 * deletion has started; the dialog then watches the partitions' first offsets move to say when
 * it is done. Mounted when opened, so each opening starts from the form.
 */
export function DeleteRecordsDialog({
  cluster,
  topic,
  partition,
  onClosed,
}: {
  cluster: string | null;
  topic: TopicDetail;
  partition: number | "all";
  onClosed: () => void;
}) {
  const client = useQueryClient();
  const dialog = useRef<HTMLDialogElement>(null);
  const [target, setTarget] = useState<string>(String(partition));
  const [mode, setMode] = useState<"all" | "offset">(partition === "all" ? "all" : "offset");
  const [offset, setOffset] = useState(() => {
    const p = topic.messagesPerPartition.find((x) => x.partition === partition);
    return p ? String(p.end) : "";
  });
  const [confirmed, setConfirmed] = useState(false);
  const [state, setState] = useState<Deletion>({ phase: "form" });
  const closed = useRef(false);
  const closeButton = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    dialog.current?.showModal();
    return () => {
      closed.current = true;
    };
  }, []);

  // The submit button goes away with the form: focus moves to the result's Close.
  useEffect(() => {
    if (state.phase === "done") closeButton.current?.focus();
  }, [state.phase]);

  const chosen = target === "all" ? topic.messagesPerPartition : topic.messagesPerPartition.filter((p) => String(p.partition) === target);
  const busy = state.phase === "deleting" || state.phase === "waiting";

  async function run() {
    // The offsets of now, not of when the page loaded: "every record" means up to today's end.
    const fresh = await fetchTopic(topic.topicName);
    const parts = fresh.messagesPerPartition.filter((p) => chosen.some((c) => c.partition === p.partition));
    const wanted = parts.map((p) => ({ partition: p.partition, upTo: mode === "all" ? p.end : Math.min(Number(offset), p.end) }));
    for (const [i, w] of wanted.entries()) {
      setState({ phase: "deleting", done: i, total: wanted.length, partition: w.partition });
      try {
        const sent = mode === "all" ? w.upTo : Number(offset);
        await api<string>(`/api/topics/${encodeURIComponent(topic.topicName)}/${w.partition}/${sent}`, { method: "DELETE" });
      } catch (e) {
        setState({ phase: "failed", message: (e as Error).message, partition: w.partition });
        await client.invalidateQueries({ queryKey: topicKey(cluster, topic.topicName) });
        return;
      }
    }
    setState({ phase: "waiting", total: wanted.length });
    const deadline = Date.now() + DELETION_WAIT_MS;
    let now = fresh;
    for (;;) {
      now = await fetchTopic(topic.topicName);
      const moved = wanted.every((w) => (now.messagesPerPartition.find((p) => p.partition === w.partition)?.begin ?? 0) >= w.upTo);
      if (moved || Date.now() > deadline || closed.current) {
        client.setQueryData(topicKey(cluster, topic.topicName), now);
        setState({
          phase: "done",
          late: !moved,
          starts: wanted.map((w) => ({
            partition: w.partition,
            target: w.upTo,
            begin: now.messagesPerPartition.find((p) => p.partition === w.partition)?.begin ?? 0,
          })),
        });
        return;
      }
      await sleep(POLL_MS);
    }
  }

  function submit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    if (!confirmed || busy) return;
    run().catch((err: Error) => setState({ phase: "failed", message: err.message, partition: -1 }));
  }

  const offsetNumber = Number(offset);
  const offsetValid = mode === "all" || (offset.trim() !== "" && Number.isSafeInteger(offsetNumber) && offsetNumber >= 0);
  const which = target === "all" ? "every partition" : `partition ${target}`;
  return (
    <dialog
      ref={dialog}
      aria-labelledby="delete-records-title"
      onCancel={(e) => {
        if (busy) e.preventDefault();
      }}
      onClose={onClosed}
    >
      <form className="dialog-form" onSubmit={submit}>
        <h2 id="delete-records-title">Delete records of {topic.topicName}</h2>
        {state.phase === "done" ? (
          <>
            <p role="status">
              {state.late
                ? `The broker has not finished after ${DELETION_WAIT_MS / 1000} s: the audit log says how the deletion ended.`
                : "Done: the records are deleted."}
            </p>
            <table aria-label="Partitions after the deletion" className="compact">
              <thead>
                <tr>
                  <th scope="col">Partition</th>
                  <th scope="col" className="num">
                    First offset now
                  </th>
                </tr>
              </thead>
              <tbody>
                {state.starts.map((s) => (
                  <tr key={s.partition}>
                    <td>{s.partition}</td>
                    <td className="num">
                      {number.format(s.begin)}
                      {s.begin < s.target && <span className="muted"> (asked {number.format(s.target)})</span>}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
            <div className="toolbar dialog-buttons">
              <button ref={closeButton} type="button" onClick={() => dialog.current?.close()}>
                Close
              </button>
            </div>
          </>
        ) : (
          <>
            <p>Deleted records are gone for every consumer. This cannot be undone.</p>
            {compactedOnly(topic) && (
              <p className="warning">This topic is compacted (cleanup.policy=compact): Kafka refuses to delete its records by offset.</p>
            )}
            <label className="stacked">
              <span>Partition</span>
              <select value={target} onChange={(e) => setTarget(e.target.value)} disabled={busy}>
                <option value="all">All partitions</option>
                {topic.messagesPerPartition.map((p) => (
                  <option key={p.partition} value={String(p.partition)}>
                    {`${p.partition} (offsets ${number.format(p.begin)} to ${number.format(p.end)})`}
                  </option>
                ))}
              </select>
            </label>
            <fieldset disabled={busy}>
              <legend>Records to delete</legend>
              <label className="check">
                <input type="radio" name="mode" checked={mode === "all"} onChange={() => setMode("all")} />
                Every record (up to the end offset)
              </label>
              <label className="check">
                <input type="radio" name="mode" checked={mode === "offset"} onChange={() => setMode("offset")} />
                The records before an offset
              </label>
              {mode === "offset" && (
                <label className="stacked">
                  <span>Up to offset (not included)</span>
                  <input type="number" min={0} step={1} value={offset} onChange={(e) => setOffset(e.target.value)} required />
                </label>
              )}
            </fieldset>
            <label className="check">
              <input type="checkbox" checked={confirmed} onChange={(e) => setConfirmed(e.target.checked)} disabled={busy} />
              {`Delete ${mode === "all" ? "every record" : `the records before offset ${offset || "…"}`} of ${which}`}
            </label>
            {(state.phase === "deleting" || state.phase === "waiting") && (
              <div className="progress" role="status">
                <progress
                  aria-label="Deletion progress"
                  max={state.total + 1}
                  value={state.phase === "deleting" ? state.done : state.total}
                />
                <span>
                  {state.phase === "deleting"
                    ? `Deleting the records of partition ${state.partition} (${state.done + 1} of ${state.total})…`
                    : "Waiting for the broker to move the first offsets…"}
                </span>
              </div>
            )}
            <DialogFooter
              error={
                state.phase === "failed"
                  ? new Error(state.partition >= 0 ? `Partition ${state.partition}: ${state.message}` : state.message)
                  : null
              }
              label="Delete records"
              busyLabel="Deleting…"
              busy={busy}
              disabled={!confirmed || !offsetValid}
              danger
              onCancel={() => dialog.current?.close()}
            />
          </>
        )}
      </form>
    </dialog>
  );
}
