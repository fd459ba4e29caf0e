import { type InfiniteData, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, type RefObject, useEffect, useId, useRef, useState } from "react";
import {
  addPartitions,
  createTopic,
  deleteRecordsUpTo,
  deleteTopic,
  fetchTopic,
  fetchTopicConfigKeys,
  type TopicDetail,
  type TopicPage,
  topicConfigKeysKey,
  topicKey,
  topicsKey,
} from "../api/topics.ts";
import { withCluster } from "../cluster.ts";
import { ConfirmDeleteDialog, DialogFooter, num, TableHead } from "../components.tsx";
import { navigate } from "../router.ts";
import { Field } from "./TopicField.tsx";
import "../styles/topic-list.css";
import { number } from "../format.ts";
import { compactedOnly, configInput, humanConfig, topicNameCollision, topicNameProblem } from "./TopicShared.ts";

/** Config presets a platform engineer reaches for; the broker's defaults otherwise. */
const PRESETS: Record<string, { label: string; configs: Record<string, string> }> = {
  none: { label: "Broker defaults", configs: {} },
  compacted: { label: "Compacted (latest value per key)", configs: { "cleanup.policy": "compact" } },
  day: { label: "Kept one day", configs: { "retention.ms": "86400000" } },
  week: { label: "Kept one week", configs: { "retention.ms": "604800000" } },
};

interface ConfigDraft {
  key: string;
  value: string;
}

/**
 * Create a topic: the name checked as it is typed (Kafka's rule, a name that exists, one that
 * collides in metric names), partitions, replication, and configs: a preset fills the rows,
 * any config the brokers know can be added (times and sizes may be typed as `7 d`, `1 GiB`).
 * The API's message on refusal.
 */
export function CreateTopicDialog({ dialog, cluster }: { dialog: RefObject<HTMLDialogElement | null>; cluster: string | null }) {
  const client = useQueryClient();
  const ids = useId();
  const [name, setName] = useState("");
  const [preset, setPreset] = useState("none");
  const [configs, setConfigs] = useState<ConfigDraft[]>([]);
  const keys = useQuery({ queryKey: topicConfigKeysKey(cluster), queryFn: fetchTopicConfigKeys, staleTime: 600_000 });
  // The names of the list's pages loaded so far (the server refuses any other that exists).
  const existing = client
    .getQueriesData<InfiniteData<TopicPage>>({ queryKey: topicsKey(cluster) })
    .flatMap(([, data]) => data?.pages.flatMap((p) => p.items.map((t) => t.topicName)) ?? []);
  const create = useMutation({
    mutationFn: createTopic,
    onSuccess: async (_text, body) => {
      await client.invalidateQueries({ queryKey: topicsKey(cluster) });
      dialog.current?.close();
      const made = body.topicName;
      navigate(withCluster(`/topics/${encodeURIComponent(made)}`, cluster));
    },
  });
  const trimmed = name.trim();
  // Said once something is typed: an empty field is not yet wrong.
  const problem = trimmed === "" ? null : topicNameProblem(trimmed, existing);
  const collision = problem ? null : topicNameCollision(trimmed, existing);
  const known = new Set(keys.data ?? []);
  const configProblems = configs.map((c) =>
    c.key.trim() === ""
      ? "A config needs a name."
      : keys.data && !known.has(c.key.trim())
        ? `The brokers have no topic config '${c.key.trim()}'.`
        : configs.filter((x) => x.key.trim() === c.key.trim()).length > 1
          ? `'${c.key.trim()}' is given twice.`
          : null,
  );
  function submit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    const whole = (k: string) => (String(form.get(k) ?? "") === "" ? undefined : Number(form.get(k)));
    create.mutate({
      topicName: trimmed,
      partitions: whole("partitions"),
      replication: whole("replication"),
      configs: Object.fromEntries(configs.map((c) => [c.key.trim(), configInput(c.key.trim(), c.value)])),
    });
  }
  const setRow = (i: number, change: Partial<ConfigDraft>) => setConfigs(configs.map((c, j) => (j === i ? { ...c, ...change } : c)));
  return (
    <dialog
      ref={dialog}
      aria-labelledby="create-title"
      onClose={() => {
        create.reset();
        setName("");
        setPreset("none");
        setConfigs([]);
      }}
    >
      <form onSubmit={submit} className="dialog-form">
        <h2 id="create-title">Create a topic</h2>
        <Field
          label="Name"
          problem={problem}
          hint={collision ?? "Letters, digits, '.', '_' and '-'; at most 249."}
          live
          control={(props) => (
            <input
              {...props}
              name="name"
              required
              maxLength={249}
              autoComplete="off"
              spellCheck={false}
              value={name}
              onChange={(e) => setName(e.target.value)}
            />
          )}
        />
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
          <select
            name="preset"
            value={preset}
            onChange={(e) => {
              setPreset(e.target.value);
              const chosen = PRESETS[e.target.value] ?? PRESETS.none!;
              setConfigs(Object.entries(chosen.configs).map(([key, value]) => ({ key, value })));
            }}
          >
            {Object.entries(PRESETS).map(([k, p]) => (
              <option key={k} value={k}>
                {p.label}
              </option>
            ))}
          </select>
        </label>
        <fieldset>
          <legend>Configs</legend>
          <datalist id={`${ids}-keys`}>
            {(keys.data ?? []).map((k) => (
              <option key={k} value={k} />
            ))}
          </datalist>
          <div className="config-rows">
            {configs.length === 0 && <span className="muted">The broker's defaults. Add a config to set one.</span>}
            {configs.map((c, i) => {
              const sent = configInput(c.key.trim(), c.value);
              const human = humanConfig(c.key.trim(), sent);
              const preview =
                sent !== c.value ? `= ${sent}${human ? ` (${human})` : ""}` : human && human !== c.value ? `= ${human}` : null;
              return (
                // biome-ignore lint/suspicious/noArrayIndexKey: rows are edited in place; their place is their identity
                <div key={i}>
                  <div className="config-row">
                    <input
                      aria-label={`Config ${i + 1} name`}
                      list={`${ids}-keys`}
                      value={c.key}
                      onChange={(e) => setRow(i, { key: e.target.value })}
                      autoComplete="off"
                      spellCheck={false}
                      aria-invalid={configProblems[i] !== null}
                    />
                    <input
                      aria-label={`Config ${i + 1} value`}
                      value={c.value}
                      onChange={(e) => setRow(i, { value: e.target.value })}
                      autoComplete="off"
                      spellCheck={false}
                    />
                    <button
                      type="button"
                      className="ghost small"
                      aria-label={`Remove config ${i + 1}`}
                      onClick={() => setConfigs(configs.filter((_, j) => j !== i))}
                    >
                      Remove
                    </button>
                  </div>
                  {(configProblems[i] || preview) && (
                    <p className={configProblems[i] ? "error field-problem" : "muted field-problem"}>{configProblems[i] ?? preview}</p>
                  )}
                </div>
              );
            })}
          </div>
          <div>
            <button type="button" className="ghost small" onClick={() => setConfigs([...configs, { key: "", value: "" }])}>
              Add config
            </button>
          </div>
        </fieldset>
        <DialogFooter
          error={create.error}
          label="Create"
          busyLabel="Creating…"
          busy={create.isPending}
          disabled={trimmed === "" || problem !== null || configProblems.some((p) => p !== null)}
          onCancel={() => dialog.current?.close()}
        />
      </form>
    </dialog>
  );
}

/**
 * Add partitions: the new count, larger than today's (Kafka never removes one), with what it
 * changes for keyed records said before. Mounted when opened.
 */
export function AddPartitionsDialog({ cluster, topic, onClosed }: { cluster: string | null; topic: TopicDetail; onClosed: () => void }) {
  const client = useQueryClient();
  const dialog = useRef<HTMLDialogElement>(null);
  const ids = useId();
  const [count, setCount] = useState(String(topic.partitions + 1));
  useEffect(() => {
    dialog.current?.showModal();
  }, []);
  const grow = useMutation({
    mutationFn: (n: number) => addPartitions(topic.topicName, n),
    onSuccess: async () => {
      await client.invalidateQueries({ queryKey: topicKey(cluster, topic.topicName) });
      dialog.current?.close();
    },
  });
  const n = Number(count);
  const problem =
    count.trim() === "" || !Number.isInteger(n)
      ? "A whole number of partitions."
      : n <= topic.partitions
        ? `More than ${topic.partitions}: Kafka cannot remove partitions.`
        : n > 100_000
          ? "At most 100,000."
          : null;
  return (
    <dialog ref={dialog} aria-labelledby={`${ids}-title`} onClose={onClosed}>
      <form
        className="dialog-form"
        onSubmit={(e) => {
          e.preventDefault();
          if (!problem) grow.mutate(n);
        }}
      >
        <h2 id={`${ids}-title`}>Add partitions to {topic.topicName}</h2>
        <p>
          {`It has ${number.format(topic.partitions)}. Partitions can be added, never removed. Keyed records then go to other partitions than before (the partitioner counts them): consumers that expect all records of a key in one partition see the key's new records elsewhere.`}
        </p>
        <Field
          label="Partitions after"
          problem={problem}
          hint={`${number.format(n - topic.partitions)} new partition${n - topic.partitions === 1 ? "" : "s"}.`}
          control={(props) => (
            <input
              {...props}
              type="number"
              min={topic.partitions + 1}
              max={100000}
              step={1}
              required
              value={count}
              onChange={(e) => setCount(e.target.value)}
            />
          )}
        />
        <DialogFooter
          error={grow.error}
          label="Add partitions"
          busyLabel="Adding…"
          busy={grow.isPending}
          disabled={problem !== null}
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
    mutationFn: () => deleteTopic(name),
    onSuccess: async () => {
      await client.invalidateQueries({ queryKey: topicsKey(cluster) });
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
        await deleteRecordsUpTo(topic.topicName, w.partition, sent);
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
              <TableHead columns={["Partition", num("First offset now")]} />
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
            {compactedOnly(topic.config) && (
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
