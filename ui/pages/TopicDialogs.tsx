import { useMutation, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, type RefObject, useState } from "react";
import { withCluster } from "../cluster.ts";
import { DialogFooter } from "../components.tsx";
import { navigate } from "../router.ts";
import { api } from "../session.ts";

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
  const [typed, setTyped] = useState("");
  const remove = useMutation({
    mutationFn: () => api<string>(`/api/topics/${encodeURIComponent(name)}`, { method: "DELETE" }),
    onSuccess: async () => {
      await client.invalidateQueries({ queryKey: ["topics", cluster] });
      dialog.current?.close();
      navigate(withCluster("/topics", cluster));
    },
  });
  return (
    <dialog
      ref={dialog}
      aria-labelledby="delete-title"
      onClose={() => {
        setTyped("");
        remove.reset();
      }}
    >
      <form
        className="dialog-form"
        onSubmit={(e) => {
          e.preventDefault();
          if (typed === name) remove.mutate();
        }}
      >
        <h2 id="delete-title">Delete {name}</h2>
        <p>Its records are deleted with it, for every consumer. This cannot be undone.</p>
        <label className="stacked">
          <span>Type the topic's name to confirm</span>
          <input value={typed} onChange={(e) => setTyped(e.target.value)} autoComplete="off" />
        </label>
        <DialogFooter
          error={remove.error}
          label="Delete topic"
          busyLabel="Deleting…"
          busy={remove.isPending}
          disabled={typed !== name}
          danger
          onCancel={() => dialog.current?.close()}
        />
      </form>
    </dialog>
  );
}
