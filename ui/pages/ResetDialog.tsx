/** The offset reset dialog of an empty group: consumer groups' committed offsets, share groups' start offsets. */
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, type RefObject, useState } from "react";
import type { OffsetReset } from "../api/consumers.ts";
import { DialogFooter, num, TableHead } from "../components.tsx";
import { number } from "../format.ts";

type ResetTo = "earliest" | "latest" | "timestamp" | "explicit";
const RESET_CHOICES: Array<{ value: ResetTo; label: string }> = [
  { value: "earliest", label: "the earliest offset" },
  { value: "latest", label: "the latest offset" },
  { value: "timestamp", label: "the first record at or after a time" },
  { value: "explicit", label: "offsets I give per partition" },
];

/** A partition as the reset dialog shows it: where the group is (null: nowhere yet) and the end. */
export interface ResetRow {
  topic: string;
  partition: number;
  current: number | null;
  end: number | null;
}

/**
 * The offset reset of an empty group, for consumer groups (committed offsets) and share groups
 * (start offsets) alike: `apply` sends the body, `legend` says what moves.
 */
export function ResetDialog({
  dialog,
  group,
  rows: offsets,
  apply,
  legend,
  noun = "offsets",
  queryKey,
}: {
  dialog: RefObject<HTMLDialogElement | null>;
  group: string;
  rows: ResetRow[];
  apply: (body: OffsetReset) => Promise<unknown>;
  legend: string;
  /** What moves, in the title and the button: "offsets", or a share group's "start offsets". */
  noun?: string;
  queryKey: unknown[];
}) {
  const topics = [...new Set(offsets.map((o) => o.topic))];
  const [to, setTo] = useState<ResetTo>("earliest");
  const client = useQueryClient();
  const reset = useMutation({
    mutationFn: apply,
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
        <h2 id="reset-title">
          Reset the {noun} of {group}
        </h2>
        <fieldset>
          <legend>{legend}</legend>
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
                      <td className="num">{o.end === null ? "—" : number.format(o.end)}</td>
                      <td className="num">
                        <input
                          type="number"
                          name={`offset:${o.topic}:${o.partition}`}
                          aria-label={`New offset of ${o.topic} partition ${o.partition}`}
                          min={0}
                          step={1}
                          required
                          defaultValue={o.current ?? o.end ?? 0}
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
          label={`Reset ${noun}`}
          busyLabel="Resetting…"
          busy={reset.isPending}
          onCancel={() => dialog.current?.close()}
        />
      </form>
    </dialog>
  );
}
