import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useEffect, useId, useRef, useState } from "react";
import { setTopicConfig, type TopicConfig, topicKey } from "../api/topics.ts";
import "../styles/topic-messages.css";
import { TableHead } from "../components.tsx";
import { configInput, firstSentence, humanConfig } from "./TopicShared.ts";

/** Set on the topic: its value differs from what the broker would give it. */
const overridden = (c: TopicConfig) => c.value !== c.defaultValue;

/** The configs set on the topic first (what an operator looks for), then the rest, each by name. */
function overridesFirst(config: TopicConfig[]): TopicConfig[] {
  const rank = (c: TopicConfig) => (overridden(c) ? 0 : 1);
  return [...config].sort((a, b) => rank(a) - rank(b) || a.configuration.localeCompare(b.configuration));
}

/**
 * The topic's configs as a person reads them: times and sizes in words (`7 d`, `1 GiB`, `∞`, the
 * raw value beside), each key's documentation under its name, overrides first and marked, the
 * default shown only where the value differs from it. Roles that may change topics edit a value
 * in its row (Enter saves, Escape cancels; `7d` or `1 GiB` is taken for a time or a size) or reset
 * an override; the API's refusal (the broker validates first) shows in that row.
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
  const needle = filter.trim().toLowerCase();
  const shown = overridesFirst(config).filter(
    (c) => c.configuration.includes(needle) || (needle.length > 2 && (c.documentation ?? "").toLowerCase().includes(needle)),
  );
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
        <TableHead columns={["Name", "Value", "Default (where it differs)"]} actions={canWrite} />
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

/** A value as a person reads it (`7 d`), the broker's own beside it; an empty string and no value look different. */
function ConfigValue({ name, value }: { name: string; value: string | null }) {
  if (value === null) return <span className="muted">—</span>;
  if (value === "") return <span className="muted">(empty)</span>;
  const human = humanConfig(name, value);
  if (human === null || human === value) return <span className="config-value">{value}</span>;
  return (
    <>
      <span className="config-value">{human}</span>
      <span className="muted config-raw config-value">{value}</span>
    </>
  );
}

/** The key's documentation: its first sentence, the rest a click away. */
function ConfigDoc({ doc }: { doc: string | null }) {
  if (!doc) return null;
  const { head, rest } = firstSentence(doc);
  if (rest === "") return <span className="config-doc">{head}</span>;
  return (
    <details className="config-doc">
      <summary>{head}</summary>
      {rest}
    </details>
  );
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
  const ids = useId();
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState(c.value ?? "");
  const input = useRef<HTMLInputElement>(null);
  const editButton = useRef<HTMLButtonElement>(null);
  /** Set when the control that had focus goes away (saved, reset, cancelled): focus returns to Edit. */
  const refocus = useRef(false);
  const save = useMutation({
    mutationFn: (value: string | null) => setTopicConfig(topic, c.configuration, value),
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
  const sent = configInput(c.configuration, draft);
  const preview = humanConfig(c.configuration, sent);
  return (
    <tr className={isSet ? "overridden" : undefined}>
      <td className="config-name">
        <span className="config-key">{c.configuration}</span>
        <ConfigDoc doc={c.documentation} />
      </td>
      <td>
        {editing ? (
          <form
            className="config-edit"
            onSubmit={(e) => {
              e.preventDefault();
              save.mutate(sent);
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
              aria-describedby={`${ids}-preview`}
              autoComplete="off"
              spellCheck={false}
            />
            <button type="submit" disabled={save.isPending}>
              {save.isPending ? "Saving…" : "Save"}
            </button>
            <button type="button" className="ghost" onClick={cancel} disabled={save.isPending}>
              Cancel
            </button>
            <span id={`${ids}-preview`} className="muted config-preview" aria-live="polite">
              {sent !== draft ? `= ${sent}${preview ? ` (${preview})` : ""}` : preview ? `= ${preview}` : ""}
            </span>
          </form>
        ) : (
          <>
            <ConfigValue name={c.configuration} value={c.value} />
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
        {isSet ? (
          c.defaultValue === null ? (
            <span className="muted">not reported</span>
          ) : (
            <ConfigValue name={c.configuration} value={c.defaultValue} />
          )
        ) : null}
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
