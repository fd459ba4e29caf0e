import { useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { type BrokerConfigView, brokersApi, useBrokerConfigs, useBrokers } from "../api/brokers.ts";
import { bytes, number } from "../format.ts";
import { Field, ResourceForm } from "./AccessList.tsx";
import "../styles/access.css";

/** Where a value comes from, in words. */
const SOURCES: Record<BrokerConfigView["source"], string> = {
  DYNAMIC_BROKER_CONFIG: "this broker (dynamic)",
  DYNAMIC_DEFAULT_BROKER_CONFIG: "cluster default (dynamic)",
  STATIC_BROKER_CONFIG: "server.properties",
  DEFAULT_CONFIG: "Kafka's default",
  DYNAMIC_BROKER_LOGGER_CONFIG: "logger (dynamic)",
  UNKNOWN: "unknown",
};

/** The brokers with their log dirs, and one broker's configs: dynamic ones changed by admins, on the broker or as the cluster default. */
export function BrokersPage({ canChange }: { canChange: boolean }) {
  const brokers = useBrokers();
  const [chosen, setChosen] = useState<number | null>(null);
  const shown = chosen ?? brokers.data?.[0]?.id ?? null;
  return (
    <section className="page access brokers">
      <h1>Brokers</h1>
      {brokers.error && (
        <p className="error" role="alert">
          {brokers.error.message}
        </p>
      )}
      {brokers.isPending && <p className="muted">Loading the brokers…</p>}
      {brokers.data && (
        <div className="access-table-scroll">
          <table className="access-table" aria-label="Brokers">
            <thead>
              <tr>
                <th scope="col">ID</th>
                <th scope="col">Address</th>
                <th scope="col">Rack</th>
                <th scope="col">Log dirs</th>
                <th scope="col">
                  <span className="visually-hidden">Configs</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {brokers.data.map((b) => (
                <tr key={b.id}>
                  <th scope="row">
                    {b.id}
                    {b.isController && <span className="badge">controller</span>}
                  </th>
                  <td>
                    {b.host}:{b.port}
                  </td>
                  <td>{b.rack ?? <span className="muted">none</span>}</td>
                  <td>
                    {b.logDirs === null ? (
                      <span className="muted">{b.logDirsError}</span>
                    ) : (
                      b.logDirs.map((d) => (
                        <div key={d.path}>
                          <code>{d.path}</code>: {bytes(d.bytes)} in {number.format(d.partitions)} partitions
                          {d.totalBytes !== null && d.usableBytes !== null && (
                            <span className="muted">
                              {" "}
                              · {bytes(d.usableBytes)} free of {bytes(d.totalBytes)}
                            </span>
                          )}
                          {d.error && <span className="access-tag access-tag-off">{d.error}</span>}
                        </div>
                      ))
                    )}
                  </td>
                  <td className="access-actions">
                    <button type="button" className="ghost" aria-pressed={b.id === shown} onClick={() => setChosen(b.id)}>
                      Configs of broker {b.id}
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {shown !== null && <BrokerConfigs brokerId={shown} canChange={canChange} />}
    </section>
  );
}

function BrokerConfigs({ brokerId, canChange }: { brokerId: number; canChange: boolean }) {
  const configs = useBrokerConfigs(brokerId);
  const [filter, setFilter] = useState("");
  const [onlyDynamic, setOnlyDynamic] = useState(false);
  const [editing, setEditing] = useState<BrokerConfigView | null>(null);
  const [status, setStatus] = useState("");
  const needle = filter.trim().toLowerCase();
  const rows = (configs.data ?? []).filter((c) => (!onlyDynamic || c.dynamic) && (needle === "" || c.name.includes(needle)));
  return (
    <>
      <h2>Configs of broker {brokerId}</h2>
      <div className="toolbar">
        <label className="search">
          <span>Filter</span>
          <input type="search" value={filter} onChange={(e) => setFilter(e.target.value)} placeholder="Config name" />
        </label>
        <label className="check">
          <input type="checkbox" checked={onlyDynamic} onChange={(e) => setOnlyDynamic(e.target.checked)} />
          <span>Dynamic only</span>
        </label>
        <span className="muted" aria-live="polite">
          {configs.data ? `${rows.length} of ${configs.data.length} configs` : ""}
        </span>
      </div>
      <p role="status" className="access-status">
        {status}
      </p>
      {configs.error && (
        <p className="error" role="alert">
          {configs.error.message}
        </p>
      )}
      {rows.length > 0 && (
        // biome-ignore lint/a11y/noNoninteractiveTabindex: the keyboard must reach a region that scrolls sideways even when its rows hold nothing focusable (WCAG 2.1.1)
        <section className="access-table-scroll" tabIndex={0} aria-label={`Configs of broker ${brokerId}, scrollable`}>
          <table className="access-table" aria-label={`Configs of broker ${brokerId}`}>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Value</th>
                <th scope="col">From</th>
                <th scope="col">Dynamic</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((c) => (
                <tr key={c.name}>
                  <th scope="row" title={c.documentation ?? undefined}>
                    {c.name}
                  </th>
                  <td>{c.sensitive ? <span className="muted">secret</span> : (c.value ?? <span className="muted">none</span>)}</td>
                  <td>{SOURCES[c.source]}</td>
                  <td>{c.dynamic ? "yes" : "no"}</td>
                  <td className="access-actions">
                    {canChange && c.dynamic && !c.sensitive && (
                      <button type="button" className="ghost" aria-label={`Edit ${c.name}`} onClick={() => setEditing(c)}>
                        Edit…
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      )}
      {editing && <ConfigDialog brokerId={brokerId} config={editing} onDone={setStatus} onClosed={() => setEditing(null)} />}
    </>
  );
}

type Scope = "broker" | "cluster";

/**
 * Sets or removes a dynamic config, on this broker or as the cluster-wide default. The broker
 * applies a change a moment after it is answered: the list is asked again until it shows it.
 */
function ConfigDialog({
  brokerId,
  config,
  onDone,
  onClosed,
}: {
  brokerId: number;
  config: BrokerConfigView;
  onDone: (message: string) => void;
  onClosed: () => void;
}) {
  const client = useQueryClient();
  const [scope, setScope] = useState<Scope>("broker");
  const [value, setValue] = useState(config.brokerValue ?? config.value ?? "");
  const [remove, setRemove] = useState(false);
  const target = scope === "broker" ? brokerId : null;
  const current = scope === "broker" ? config.brokerValue : config.clusterDefault;
  const where = scope === "broker" ? `broker ${brokerId}` : "the cluster default";
  const settle = async (want: string | null) => {
    for (let i = 0; i < 40; i++) {
      const list = await client.fetchQuery({
        queryKey: [...brokersApi.key, brokerId, "configs"],
        queryFn: () => brokersApi.configs(brokerId),
        staleTime: 0,
      });
      const c = list.find((x) => x.name === config.name);
      if ((scope === "broker" ? c?.brokerValue : c?.clusterDefault) === want) return;
      await new Promise((r) => setTimeout(r, 250));
    }
  };
  return (
    <ResourceForm
      title={`Change ${config.name}`}
      label={remove ? "Remove" : "Save"}
      busyLabel={remove ? "Removing…" : "Saving…"}
      danger={remove}
      body={() => (remove || value.trim() !== "" ? { value: value.trim() } : null)}
      save={async (body) => {
        if (remove) await brokersApi.removeConfig(target, config.name);
        else await brokersApi.setConfig(target, config.name, body.value);
        await settle(remove ? null : body.value);
      }}
      onSaved={() => onDone(remove ? `${config.name} is removed from ${where}.` : `${config.name} is set on ${where}.`)}
      onClosed={onClosed}
    >
      <fieldset className="segmented">
        <legend>Where</legend>
        <label>
          <input type="radio" name="scope" checked={scope === "broker"} onChange={() => setScope("broker")} />
          <span>Broker {brokerId}</span>
        </label>
        <label>
          <input type="radio" name="scope" checked={scope === "cluster"} onChange={() => setScope("cluster")} />
          <span>Every broker (cluster default)</span>
        </label>
      </fieldset>
      <p className="muted access-field-hint">
        Now {current === null ? `not set on ${where}` : `${current} on ${where}`}; in effect on broker {brokerId}: {config.value ?? "none"}{" "}
        ({SOURCES[config.source]}).
      </p>
      <Field label="Value" path="value">
        {(problem) => <input value={value} onChange={(e) => setValue(e.target.value)} disabled={remove} autoComplete="off" {...problem} />}
      </Field>
      <label className="check">
        <input type="checkbox" checked={remove} onChange={(e) => setRemove(e.target.checked)} disabled={current === null} />
        <span>Remove the value set on {where} (back to the next level)</span>
      </label>
    </ResourceForm>
  );
}
