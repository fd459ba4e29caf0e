import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useEffect, useMemo, useRef, useState } from "react";
import {
  type ConfigDefinition,
  type ConfigInfos,
  type ConnectorConfig,
  connectKeys,
  connectorHref,
  createConnector,
  fetchConfig,
  fetchPlugins,
  saveConfig,
  shortClass,
  validateConfig,
  whileRebalancing,
} from "../api/connect.ts";
import { ErrorAlert, Link } from "../components.tsx";
import { navigate, useLocation } from "../router.ts";
import { ApiError } from "../session.ts";
import { ConnectDoc } from "./ConnectDocs.tsx";

interface Row {
  id: number;
  key: string;
  value: string;
}

/** Settings the page holds outside the rows: the connector's name and its plugin. */
const OWN_KEYS = new Set(["name", "connector.class"]);

let nextRowId = 1;
const row = (key = "", value = ""): Row => ({ id: nextRowId++, key, value });

function rowsOf(config: ConnectorConfig): Row[] {
  return Object.entries(config)
    .filter(([k]) => !OWN_KEYS.has(k))
    .map(([k, v]) => row(k, v));
}

/** The rows as Connect's flat map: a row without a name, or with an empty value, is left unset. */
function configOf(rows: Row[]): ConnectorConfig {
  const out: ConnectorConfig = {};
  for (const r of rows) if (r.key.trim() !== "" && r.value !== "") out[r.key.trim()] = r.value;
  return out;
}

/** A JSON object of settings as Connect's flat map of strings; throws with what is wrong. */
function parseJson(text: string): ConnectorConfig {
  const value: unknown = JSON.parse(text);
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw new Error("The configuration must be a JSON object.");
  const out: ConnectorConfig = {};
  for (const [k, v] of Object.entries(value)) {
    if (v !== null && typeof v === "object") throw new Error(`The value of ${k} must be a string, a number or a boolean.`);
    out[k] = v === null ? "" : String(v);
  }
  return out;
}

/**
 * Creates a connector from a plugin, or edits one's configuration. Settings are rows of name
 * and value (or one JSON object). "Validate" asks the plugin itself: its message for each
 * setting shows beside that setting, and a setting it misses is added as a row for it.
 */
export function ConnectorEditor({ alias, name }: { alias: string; name?: string }) {
  const editing = name !== undefined;
  const location = useLocation();
  const client = useQueryClient();
  const asked = new URLSearchParams(location.includes("?") ? location.slice(location.indexOf("?")) : "").get("plugin") ?? "";
  const plugins = useQuery({ queryKey: connectKeys.plugins(alias), queryFn: () => fetchPlugins(alias), staleTime: 60_000 });
  const existing = useQuery({
    queryKey: [...connectKeys.connector(alias, name ?? ""), "config"],
    queryFn: () => fetchConfig(alias, name!),
    enabled: editing,
    ...whileRebalancing,
  });

  const [plugin, setPlugin] = useState(asked);
  const [connectorName, setConnectorName] = useState(name ?? "");
  const [rows, setRows] = useState<Row[]>([row("tasks.max", "1")]);
  const [mode, setMode] = useState<"rows" | "json">("rows");
  const [json, setJson] = useState("");
  const [jsonError, setJsonError] = useState<string | null>(null);
  const [checked, setChecked] = useState<ConfigInfos | null>(null);
  const loaded = useRef(false);

  // The connector's configuration, once, when editing: later refetches do not overwrite the rows.
  useEffect(() => {
    if (!editing || !existing.data || loaded.current) return;
    loaded.current = true;
    setPlugin(existing.data["connector.class"] ?? "");
    setRows(rowsOf(existing.data));
  }, [editing, existing.data]);

  // The plugin's settings, for the names offered while typing and the rows it requires.
  const definitions = useQuery({
    queryKey: ["connect", alias, "definitions", plugin],
    queryFn: () => validateConfig(alias, plugin, { "connector.class": plugin, name: "loupe-definitions" }),
    enabled: plugin !== "",
    staleTime: 5 * 60_000,
  });
  const byName = useMemo(
    () => new Map((definitions.data?.configs ?? []).map((c) => [c.definition.name, c.definition])),
    [definitions.data],
  );
  const prefilled = useRef<string | null>(null);
  useEffect(() => {
    if (editing || !definitions.data || prefilled.current === plugin) return;
    prefilled.current = plugin;
    const required = definitions.data.configs
      .map((c) => c.definition)
      .filter((d) => d.required && d.default_value === null && !OWN_KEYS.has(d.name));
    setRows((now) => [...now, ...required.filter((d) => !now.some((r) => r.key === d.name)).map((d) => row(d.name))]);
  }, [editing, definitions.data, plugin]);

  /** The settings now, from whichever view is open; null (and the JSON's error shown) when the JSON does not parse. */
  function currentConfig(): ConnectorConfig | null {
    let settings: ConnectorConfig;
    if (mode === "json") {
      try {
        settings = parseJson(json);
        setJsonError(null);
      } catch (e) {
        setJsonError((e as Error).message);
        return null;
      }
    } else settings = configOf(rows);
    const out: ConnectorConfig = { ...settings, "connector.class": plugin };
    const n = (editing ? name : connectorName).trim();
    if (n !== "") out.name = n;
    return out;
  }

  const validate = useMutation({
    mutationFn: (config: ConnectorConfig) => validateConfig(alias, plugin, config),
    onSuccess: (infos) => {
      setChecked(infos);
      // A setting the plugin finds wrong and the rows do not hold gets a row, so its message has a place.
      if (mode === "rows")
        setRows((now) => [
          ...now,
          ...infos.configs
            .filter(
              (c) => c.value.errors.length > 0 && !OWN_KEYS.has(c.definition.name) && !now.some((r) => r.key.trim() === c.definition.name),
            )
            .map((c) => row(c.definition.name)),
        ]);
    },
  });
  const save = useMutation({
    mutationFn: (config: ConnectorConfig) => {
      const { name: _n, ...rest } = config;
      return editing ? saveConfig(alias, name, { ...rest, name }) : createConnector(alias, connectorName.trim(), rest);
    },
    onSuccess: async () => {
      const saved = editing ? name : connectorName.trim();
      await client.invalidateQueries({ queryKey: ["connect", alias] });
      navigate(connectorHref(alias, saved));
    },
    onError: (e, config) => {
      // Connect refuses an invalid configuration with one long sentence: ask for the messages per setting.
      if (e instanceof ApiError && e.status === 400) validate.mutate(config);
    },
  });

  const errors = useMemo(() => {
    const m = new Map<string, string[]>();
    for (const c of checked?.configs ?? []) if (c.value.errors.length > 0) m.set(c.definition.name, c.value.errors);
    return m;
  }, [checked]);
  const problems = [...errors.values()].reduce((n, e) => n + e.length, 0);

  function switchMode(next: "rows" | "json") {
    if (next === mode) return;
    if (next === "json") {
      setJson(JSON.stringify(configOf(rows), null, 2));
      setJsonError(null);
      setMode("json");
      return;
    }
    try {
      const parsed = parseJson(json);
      if (!editing && parsed.name) setConnectorName(parsed.name);
      if (parsed["connector.class"]) setPlugin(parsed["connector.class"]);
      setRows(rowsOf(parsed));
      setJsonError(null);
      setMode("rows");
    } catch (e) {
      setJsonError((e as Error).message);
    }
  }

  function submit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const config = currentConfig();
    if (config) save.mutate(config);
  }

  const choosable = (plugins.data ?? []).filter((p) => p.type === "source" || p.type === "sink");
  const back = editing ? connectorHref(alias, name) : `/connect?alias=${encodeURIComponent(alias)}`;
  const setRow = (id: number, change: Partial<Row>) => setRows((now) => now.map((r) => (r.id === id ? { ...r, ...change } : r)));

  if (editing && existing.error)
    return (
      <section className="page connect">
        <h1>Edit {name}</h1>
        <ErrorAlert error={existing.error} />
      </section>
    );
  return (
    <section className="page connect connector-editor">
      <p className="crumbs">
        <Link to={`/connect?alias=${encodeURIComponent(alias)}`}>Connect</Link> <span className="muted">/ {alias}</span>
      </p>
      <h1>{editing ? `Edit ${name}` : "Create a connector"}</h1>
      {editing && existing.isPending && <p className="muted">Loading the configuration…</p>}
      <form onSubmit={submit} className="editor-form" aria-label={editing ? `Configuration of ${name}` : "New connector"}>
        <div className="editor-head">
          {!editing && (
            <label className="stacked">
              <span>Name</span>
              <input
                value={connectorName}
                onChange={(e) => setConnectorName(e.target.value)}
                required
                autoComplete="off"
                aria-invalid={errors.has("name") || undefined}
                aria-describedby={errors.has("name") ? "error-name" : undefined}
              />
              <FieldErrors id="error-name" errors={errors.get("name")} />
              {connectorName.includes("/") && (
                <span className="error field-error">
                  Connect accepts a slash in a name, but its REST API then cannot open, change or delete the connector.
                </span>
              )}
            </label>
          )}
          <label className="stacked">
            <span>Plugin</span>
            <select
              value={plugin}
              onChange={(e) => {
                setPlugin(e.target.value);
                setChecked(null);
              }}
              disabled={editing}
              required
              aria-invalid={errors.has("connector.class") || undefined}
              aria-describedby={errors.has("connector.class") ? "error-connector-class" : undefined}
            >
              <option value="">Choose a plugin…</option>
              {plugin !== "" && !choosable.some((p) => p.class === plugin) && <option value={plugin}>{plugin}</option>}
              {choosable.map((p) => (
                <option key={p.class} value={p.class}>
                  {`${p.name ?? shortClass(p.class)} (${p.type}${p.version ? ` ${p.version}` : ""})`}
                </option>
              ))}
            </select>
            <FieldErrors id="error-connector-class" errors={errors.get("connector.class")} />
          </label>
        </div>
        <ErrorAlert error={plugins.error} />

        <fieldset className="settings">
          <legend>Settings</legend>
          <div className="toolbar" role="radiogroup" aria-label="Edit the settings as">
            <label className="check">
              <input type="radio" name="mode" checked={mode === "rows"} onChange={() => switchMode("rows")} />
              Rows
            </label>
            <label className="check">
              <input type="radio" name="mode" checked={mode === "json"} onChange={() => switchMode("json")} />
              JSON
            </label>
            <span className="muted">A setting left empty is not sent (the plugin's default applies).</span>
          </div>
          {mode === "rows" ? (
            <>
              <datalist id="connect-setting-names">
                {[...byName.keys()]
                  .filter((k) => !OWN_KEYS.has(k))
                  .map((k) => (
                    <option key={k} value={k} />
                  ))}
              </datalist>
              <ul className="setting-rows">
                {rows.map((r, i) => (
                  <SettingRow
                    key={r.id}
                    index={i}
                    row={r}
                    definition={byName.get(r.key.trim())}
                    errors={errors.get(r.key.trim())}
                    onChange={(change) => setRow(r.id, change)}
                    onRemove={() => setRows((now) => now.filter((x) => x.id !== r.id))}
                  />
                ))}
              </ul>
              <button type="button" className="ghost" onClick={() => setRows((now) => [...now, row()])}>
                Add a setting
              </button>
            </>
          ) : (
            <label className="stacked">
              <span>Settings as one JSON object</span>
              <textarea
                className="json"
                value={json}
                onChange={(e) => setJson(e.target.value)}
                rows={16}
                spellCheck={false}
                aria-invalid={jsonError !== null || undefined}
                aria-describedby={jsonError ? "json-error" : undefined}
              />
              {jsonError && (
                <span className="error" id="json-error" role="alert">
                  {jsonError}
                </span>
              )}
              {errors.size > 0 && (
                <ul className="error" aria-label="The plugin's messages">
                  {[...errors].map(([k, list]) => (
                    <li key={k}>
                      <span className="mono">{k}</span>: {list.join(" ")}
                    </li>
                  ))}
                </ul>
              )}
            </label>
          )}
        </fieldset>

        <ErrorAlert error={validate.error} />
        {checked && !validate.isPending && (
          <p className={problems > 0 ? "error" : "ok"} role="status">
            {problems > 0
              ? `The plugin finds ${problems === 1 ? "1 problem" : `${problems} problems`}: see the ${problems === 1 ? "message" : "messages"} beside the settings.`
              : "The plugin accepts this configuration."}
          </p>
        )}
        <ErrorAlert error={save.error} />
        <div className="toolbar dialog-buttons">
          <button
            type="button"
            className="ghost"
            disabled={plugin === "" || validate.isPending}
            onClick={() => {
              const config = currentConfig();
              if (config) validate.mutate(config);
            }}
          >
            {validate.isPending ? "Validating…" : "Validate"}
          </button>
          <button type="submit" disabled={plugin === "" || save.isPending || (editing && !existing.data)}>
            {save.isPending ? "Saving…" : editing ? "Save" : "Create"}
          </button>
          <button type="button" className="ghost" onClick={() => navigate(back)}>
            Cancel
          </button>
        </div>
      </form>
    </section>
  );
}

function FieldErrors({ id, errors }: { id: string; errors: string[] | undefined }) {
  if (!errors || errors.length === 0) return null;
  return (
    <span className="error field-error" id={id}>
      {errors.join(" ")}
    </span>
  );
}

/** One setting: its name (offered from the plugin's), its value, the plugin's help and its messages. */
function SettingRow({
  index,
  row: r,
  definition,
  errors,
  onChange,
  onRemove,
}: {
  index: number;
  row: Row;
  definition: ConfigDefinition | undefined;
  errors: string[] | undefined;
  onChange: (change: Partial<Row>) => void;
  onRemove: () => void;
}) {
  const key = r.key.trim();
  const what = key === "" ? `setting ${index + 1}` : key;
  const errorId = `setting-error-${r.id}`;
  const helpId = `setting-help-${r.id}`;
  const described = [errors ? errorId : null, definition ? helpId : null].filter(Boolean).join(" ") || undefined;
  return (
    <li className={errors ? "setting-row invalid" : "setting-row"}>
      <input
        className="setting-key mono"
        value={r.key}
        onChange={(e) => onChange({ key: e.target.value })}
        list="connect-setting-names"
        aria-label={`Name of ${what}`}
        placeholder="setting.name"
        autoComplete="off"
        spellCheck={false}
      />
      <input
        className="setting-value mono"
        type={definition?.type === "PASSWORD" ? "password" : "text"}
        value={r.value}
        onChange={(e) => onChange({ value: e.target.value })}
        aria-label={`Value of ${what}`}
        aria-invalid={errors ? true : undefined}
        aria-describedby={described}
        placeholder={definition?.default_value ?? (definition?.required ? "required" : "")}
        autoComplete="off"
        spellCheck={false}
      />
      <button type="button" className="ghost" onClick={onRemove} aria-label={`Remove ${what}`}>
        Remove
      </button>
      {errors && (
        <span className="error field-error" id={errorId}>
          {errors.join(" ")}
        </span>
      )}
      {definition && (
        <div className="muted setting-help" id={helpId}>
          {`${definition.type}${definition.required ? ", required" : ""}. `}
          <ConnectDoc text={definition.documentation} />
        </div>
      )}
    </li>
  );
}
