import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { DATA_TYPES, fetchMetadata, removeMetadata, saveMetadata, type TopicMetadata } from "../api/metadata.ts";
import { topicKey } from "../api/topics.ts";
import { ErrorAlert } from "../components.tsx";

/** A JSON schema (Avro's included) indented to be read; any other text as it is. */
function pretty(schema: string): string {
  try {
    return JSON.stringify(JSON.parse(schema), null, 2);
  } catch {
    return schema;
  }
}

const metadataKey = (cluster: string | null, name: string) => ["topic-metadata", cluster, name] as const;

/**
 * How the topic's keys and values are read: stored types and schemas, or types guessed from its
 * records. Roles that may change topics set them (the API checks AVRO and JSON schemas and says
 * why one is refused) or forget the stored ones to go back to guessing.
 */
export function TopicMetadataPanel({ cluster, name, canWrite }: { cluster: string | null; name: string; canWrite: boolean }) {
  const meta = useQuery({
    queryKey: metadataKey(cluster, name),
    queryFn: () => fetchMetadata(name),
  });
  const m = meta.data;
  // Kept here: the form is remade with the saved values, the word that they were saved stays.
  const [notice, setNotice] = useState<string | null>(null);
  return (
    <>
      <h2>Key and value types</h2>
      <ErrorAlert error={meta.error} />
      {meta.isPending && <p className="muted">Loading the topic's types…</p>}
      {m && (
        <>
          <p className="muted" data-testid="metadata-source">
            {m.inferred
              ? "Guessed from the topic's newest records: nothing is stored for this topic."
              : "Stored for this topic: the workbench and clients read its records with these."}
          </p>
          {canWrite ? (
            <MetadataForm key={JSON.stringify(m)} cluster={cluster} name={name} metadata={m} notice={notice} setNotice={setNotice} />
          ) : (
            <dl className="metadata">
              <dt>Key type</dt>
              <dd>{m.keyType}</dd>
              <dt>Value type</dt>
              <dd>{m.valueType}</dd>
              <dt>Key schema</dt>
              <dd>{m.keySchema ? <pre className="schema">{pretty(m.keySchema)}</pre> : <span className="muted">none</span>}</dd>
              <dt>Value schema</dt>
              <dd>{m.valueSchema ? <pre className="schema">{pretty(m.valueSchema)}</pre> : <span className="muted">none</span>}</dd>
            </dl>
          )}
        </>
      )}
    </>
  );
}

function MetadataForm({
  cluster,
  name,
  metadata: m,
  notice: saved,
  setNotice: setSaved,
}: {
  cluster: string | null;
  name: string;
  metadata: TopicMetadata;
  notice: string | null;
  setNotice: (text: string | null) => void;
}) {
  const client = useQueryClient();
  const refresh = async () => {
    await Promise.all([
      client.invalidateQueries({ queryKey: metadataKey(cluster, name) }),
      client.invalidateQueries({ queryKey: topicKey(cluster, name) }),
    ]);
  };
  const save = useMutation({
    mutationFn: (params: URLSearchParams) => saveMetadata(name, params),
    onSuccess: async () => {
      setSaved("Types saved.");
      await refresh();
    },
  });
  const forget = useMutation({
    mutationFn: () => removeMetadata(name),
    onSuccess: async () => {
      setSaved("Stored types removed: they are guessed from the records again.");
      await refresh();
    },
  });
  function submit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    setSaved(null);
    forget.reset();
    const form = new FormData(e.currentTarget);
    const params = new URLSearchParams({ keyType: String(form.get("keyType")), valueType: String(form.get("valueType")) });
    for (const field of ["keySchema", "valueSchema"]) {
      const schema = String(form.get(field) ?? "").trim();
      if (schema !== "") params.set(field, schema);
    }
    save.mutate(params);
  }
  const busy = save.isPending || forget.isPending;
  const error = save.error ?? forget.error;
  return (
    <form className="metadata-form" onSubmit={submit} aria-label="Key and value types">
      <div className="metadata-grid">
        {(["key", "value"] as const).map((side) => (
          <fieldset key={side}>
            <legend>{side === "key" ? "Key" : "Value"}</legend>
            <label className="stacked">
              <span>Type</span>
              <select name={`${side}Type`} defaultValue={side === "key" ? m.keyType : m.valueType}>
                {DATA_TYPES.map((t) => (
                  <option key={t} value={t}>
                    {t}
                  </option>
                ))}
              </select>
            </label>
            <label className="stacked">
              <span>Schema (AVRO, JSON or PROTOBUF; empty for none)</span>
              <textarea
                name={`${side}Schema`}
                defaultValue={(side === "key" ? m.keySchema : m.valueSchema) ?? ""}
                rows={6}
                spellCheck={false}
              />
            </label>
          </fieldset>
        ))}
      </div>
      <ErrorAlert error={error} />
      {saved && !error && (
        <p className="saved" role="status">
          {saved}
        </p>
      )}
      <div className="toolbar">
        <button type="submit" disabled={busy}>
          {save.isPending ? "Saving…" : "Save types"}
        </button>
        {!m.inferred && (
          <button
            type="button"
            className="ghost"
            disabled={busy}
            onClick={() => {
              setSaved(null);
              save.reset();
              forget.mutate();
            }}
          >
            {forget.isPending ? "Removing…" : "Forget stored types"}
          </button>
        )}
      </div>
    </form>
  );
}
