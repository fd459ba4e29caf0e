import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useEffect, useRef, useState } from "react";
import { api } from "../session.ts";
import { type TopicConfig, topicKey } from "./TopicDetail.tsx";

/** Set on the topic: its value differs from what the broker would give it. */
const overridden = (c: TopicConfig) => c.value !== c.defaultValue;

/** The configs set on the topic first (what an operator looks for), then the rest, each by name. */
function overridesFirst(config: TopicConfig[]): TopicConfig[] {
  const rank = (c: TopicConfig) => (overridden(c) ? 0 : 1);
  return [...config].sort((a, b) => rank(a) - rank(b) || a.configuration.localeCompare(b.configuration));
}

/**
 * The topic's configs, each with its value and default, overrides marked. Roles that may change
 * topics edit a value in its row (Enter saves, Escape cancels) or reset an override; the API's
 * refusal (the broker validates first) shows in that row.
 */
export function TopicConfigs({
  cluster,
  name,
  config,
  canWrite,
}: {
  cluster: string | null;
  name: string;
  config: TopicConfig[];
  canWrite: boolean;
}) {
  const [filter, setFilter] = useState("");
  const shown = overridesFirst(config).filter((c) => c.configuration.includes(filter.trim().toLowerCase()));
  const setCount = config.filter(overridden).length;
  return (
    <>
      <div className="section-head">
        <h2>Configuration</h2>
        <span className="muted">
          {setCount === 0 ? "Every config has its default." : `${setCount} set on this topic, ${config.length - setCount} default.`}
        </span>
        <label className="search">
          <span>Filter</span>
          <input type="search" value={filter} onChange={(e) => setFilter(e.target.value)} placeholder="retention" />
        </label>
      </div>
      <table aria-label="Configuration" className="configs">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Value</th>
            <th scope="col">Default</th>
            {canWrite && (
              <th scope="col">
                <span className="sr-only">Actions</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody>
          {shown.map((c) => (
            <ConfigRow key={c.configuration} cluster={cluster} topic={name} config={c} canWrite={canWrite} />
          ))}
        </tbody>
      </table>
      {shown.length === 0 && <p className="muted">No config name contains “{filter}”: clear the filter to see them all.</p>}
    </>
  );
}

/** A value as the broker has it: an empty string and no value at all look different. */
function ConfigValue({ value }: { value: string | null }) {
  if (value === null) return <span className="muted">—</span>;
  if (value === "") return <span className="muted">(empty)</span>;
  return <span className="config-value">{value}</span>;
}

function ConfigRow({
  cluster,
  topic,
  config: c,
  canWrite,
}: {
  cluster: string | null;
  topic: string;
  config: TopicConfig;
  canWrite: boolean;
}) {
  const client = useQueryClient();
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState(c.value ?? "");
  const input = useRef<HTMLInputElement>(null);
  const editButton = useRef<HTMLButtonElement>(null);
  /** Set when the control that had focus goes away (saved, reset, cancelled): focus returns to Edit. */
  const refocus = useRef(false);
  const save = useMutation({
    mutationFn: (value: string | null) =>
      api<string>(`/api/topics/config/${encodeURIComponent(topic)}`, {
        method: "PUT",
        body: JSON.stringify({ configs: [{ key: c.configuration, value }] }),
      }),
    // The row leaves edit mode once the page shows the broker's new value.
    onSuccess: async () => {
      await client.invalidateQueries({ queryKey: topicKey(cluster, topic) });
      refocus.current = true;
      setEditing(false);
    },
  });
  useEffect(() => {
    if (editing) input.current?.focus();
  }, [editing]);
  useEffect(() => {
    if (refocus.current && !editing && !save.isPending) {
      refocus.current = false;
      editButton.current?.focus();
    }
  });
  const isSet = overridden(c);
  const cancel = () => {
    setEditing(false);
    save.reset();
    refocus.current = true;
  };
  return (
    <tr className={isSet ? "overridden" : undefined}>
      <td title={c.documentation ?? undefined} className="config-name">
        {c.configuration}
      </td>
      <td>
        {editing ? (
          <form
            className="config-edit"
            onSubmit={(e) => {
              e.preventDefault();
              save.mutate(draft);
            }}
          >
            <input
              ref={input}
              value={draft}
              onChange={(e) => setDraft(e.target.value)}
              onKeyDown={(e) => {
                if (e.key === "Escape") {
                  e.preventDefault();
                  cancel();
                }
              }}
              aria-label={`New value of ${c.configuration}`}
              autoComplete="off"
              spellCheck={false}
            />
            <button type="submit" disabled={save.isPending}>
              {save.isPending ? "Saving…" : "Save"}
            </button>
            <button type="button" className="ghost" onClick={cancel} disabled={save.isPending}>
              Cancel
            </button>
          </form>
        ) : (
          <>
            <ConfigValue value={c.value} />
            {isSet && <span className="badge">set</span>}
          </>
        )}
        {save.error && (
          <p className="error row-error" role="alert">
            {save.error.message}
          </p>
        )}
      </td>
      <td className="muted">
        <ConfigValue value={c.defaultValue} />
      </td>
      {canWrite && (
        <td className="row-actions">
          {!editing && (
            <>
              <button
                ref={editButton}
                type="button"
                className="ghost small"
                aria-label={`Edit ${c.configuration}`}
                onClick={() => {
                  setDraft(c.value ?? "");
                  save.reset();
                  setEditing(true);
                }}
                disabled={save.isPending}
              >
                Edit
              </button>
              {isSet && (
                <button
                  type="button"
                  className="ghost small"
                  aria-label={`Reset ${c.configuration} to its default`}
                  onClick={() => save.mutate(null)}
                  disabled={save.isPending}
                >
                  {save.isPending ? "Resetting…" : "Reset"}
                </button>
              )}
            </>
          )}
        </td>
      )}
    </tr>
  );
}
