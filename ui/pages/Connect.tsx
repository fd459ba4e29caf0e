import { useQuery } from "@tanstack/react-query";
import { useMemo } from "react";
import { ErrorAlert, Link, TableHead } from "../components.tsx";
import { navigate, replaceParams } from "../router.ts";
import "../styles/connect.css";
import {
  type ConnectCluster,
  type ConnectorStatus,
  connectKeys,
  connectorHref,
  fetchClusters,
  fetchConnectors,
  fetchPlugins,
  newConnectorHref,
  shortClass,
  stateClass,
  whileRebalancing,
} from "../api/connect.ts";
import { ConnectorPage } from "./ConnectConnector.tsx";
import { ConnectDoc } from "./ConnectDocs.tsx";
import { ConnectorEditor } from "./ConnectEditor.tsx";

/** How often the lists ask again: connector states change on their own (a task fails, a rebalance). */
const CLUSTERS_REFRESH_MS = 10_000;
const CONNECTORS_REFRESH_MS = 5_000;

/** A page under /connect by its path: `/connect/{alias}/new`, `/connect/{alias}/connectors/{name}[/edit]`, else the list. */
function routeOf(
  path: string,
): { page: "list" } | { page: "new"; alias: string } | { page: "connector" | "edit"; alias: string; name: string } {
  const parts = path
    .split("/")
    .slice(2)
    .map((p) => {
      try {
        return decodeURIComponent(p);
      } catch {
        return p;
      }
    });
  const [alias, what, name, edit] = parts;
  if (alias && what === "new" && parts.length === 2) return { page: "new", alias };
  if (alias && what === "connectors" && name && parts.length === 3) return { page: "connector", alias, name };
  if (alias && what === "connectors" && name && edit === "edit" && parts.length === 4) return { page: "edit", alias, name };
  return { page: "list" };
}

/**
 * Kafka Connect: the clusters Loupe is configured with and their workers, the connectors of one
 * cluster with their state and tasks, its plugins; a connector's own page, and the editor.
 */
export function ConnectPage({ path, location, canWrite }: { path: string; location: string; canWrite: boolean }) {
  const route = routeOf(path);
  if ((route.page === "new" || route.page === "edit") && !canWrite)
    return (
      <section className="page connect">
        <h1>Connect</h1>
        <p className="muted">Creating and changing connectors needs the write role.</p>
      </section>
    );
  if (route.page === "new") return <ConnectorEditor alias={route.alias} />;
  if (route.page === "edit") return <ConnectorEditor alias={route.alias} name={route.name} />;
  if (route.page === "connector") return <ConnectorPage alias={route.alias} name={route.name} canWrite={canWrite} />;
  return <ConnectList location={location} canWrite={canWrite} />;
}

function ConnectList({ location, canWrite }: { location: string; canWrite: boolean }) {
  const params = new URLSearchParams(location.includes("?") ? location.slice(location.indexOf("?")) : "");
  const clusters = useQuery({ queryKey: connectKeys.clusters, queryFn: fetchClusters, refetchInterval: CLUSTERS_REFRESH_MS });
  const aliases = clusters.data?.map((c) => c.alias) ?? [];
  const alias = aliases.find((a) => a === params.get("alias")) ?? aliases[0] ?? null;
  const set = (changes: Record<string, string | null>) => replaceParams("/connect", params, changes);

  return (
    <section className="page connect">
      <h1>Connect</h1>
      <ErrorAlert error={clusters.error} />
      {clusters.isPending && <p className="muted">Loading the Connect clusters…</p>}
      {clusters.data && clusters.data.length === 0 && (
        <p className="muted">
          No Kafka Connect cluster is configured: name one under <code>connect.clusters</code> in Loupe's configuration (alias and worker
          URLs), or in <code>LOUPE_CONNECT_URLS</code>.
        </p>
      )}
      {clusters.data && clusters.data.length > 0 && <Workers clusters={clusters.data} />}
      {alias && (
        <>
          <div className="toolbar connect-head">
            <h2>Connectors</h2>
            {aliases.length > 1 && (
              <label className="search">
                <span>Connect cluster</span>
                <select value={alias} onChange={(e) => set({ alias: e.target.value })}>
                  {aliases.map((a) => (
                    <option key={a} value={a}>
                      {a}
                    </option>
                  ))}
                </select>
              </label>
            )}
            <label className="search">
              <span>Search</span>
              <input
                type="search"
                value={params.get("q") ?? ""}
                onChange={(e) => set({ q: e.target.value })}
                placeholder="Connector name"
              />
            </label>
            {canWrite && (
              <button type="button" onClick={() => navigate(newConnectorHref(alias))}>
                Create connector…
              </button>
            )}
          </div>
          <Connectors alias={alias} q={params.get("q") ?? ""} canWrite={canWrite} />
          <Plugins alias={alias} canWrite={canWrite} />
        </>
      )}
    </section>
  );
}

function Workers({ clusters }: { clusters: ConnectCluster[] }) {
  return (
    <>
      <h2>Workers</h2>
      <table aria-label="Connect workers">
        <TableHead columns={["Cluster", "Worker", "State", "Version", "Kafka cluster"]} />
        <tbody>
          {clusters.flatMap((c) =>
            c.workers.map((w) => (
              <tr key={`${c.alias} ${w.url}`}>
                <td>{c.alias}</td>
                <td>{w.url}</td>
                <td>
                  <span className={stateClass(w.state)}>{w.state}</span>
                </td>
                <td>{w.version ?? "—"}</td>
                <td>{w.state === "UP" ? (w.kafkaClusterId ?? "—") : <span className="muted">{w.error ?? "does not answer"}</span>}</td>
              </tr>
            )),
          )}
        </tbody>
      </table>
    </>
  );
}

/** "2 running", "1 of 2 failed": what the tasks do, at a glance. */
function tasksSummary(status: ConnectorStatus | undefined): string {
  if (!status) return "—";
  const tasks = status.tasks;
  if (tasks.length === 0) return "no task";
  const states = new Map<string, number>();
  for (const t of tasks) states.set(t.state, (states.get(t.state) ?? 0) + 1);
  if (states.size === 1) return `${tasks.length} ${tasks[0]!.state.toLowerCase()}`;
  return [...states].map(([s, n]) => `${n} of ${tasks.length} ${s.toLowerCase()}`).join(", ");
}

function Connectors({ alias, q, canWrite }: { alias: string; q: string; canWrite: boolean }) {
  const connectors = useQuery({
    queryKey: connectKeys.connectors(alias),
    queryFn: () => fetchConnectors(alias),
    refetchInterval: CONNECTORS_REFRESH_MS,
    ...whileRebalancing,
  });
  const rows = useMemo(() => {
    const needle = q.toLowerCase();
    return Object.entries(connectors.data ?? {})
      .filter(([name]) => name.toLowerCase().includes(needle))
      .sort(([a], [b]) => a.localeCompare(b));
  }, [connectors.data, q]);
  if (connectors.error) return <ErrorAlert error={connectors.error} />;
  if (connectors.isPending) return <p className="muted">Loading the connectors of {alias}…</p>;
  if (Object.keys(connectors.data).length === 0)
    return (
      <p className="muted">
        {canWrite ? "No connector runs on this cluster yet: create one from a plugin below." : "No connector runs on this cluster yet."}
      </p>
    );
  if (rows.length === 0) return <p className="muted">No connector matches the search.</p>;
  return (
    <table aria-label="Connectors">
      <TableHead columns={["Name", "Plugin", "Type", "State", "Tasks", "Worker"]} />
      <tbody>
        {rows.map(([name, { status, info }]) => {
          const state = status?.connector.state ?? "UNKNOWN";
          const cls = info?.config["connector.class"];
          return (
            <tr key={name}>
              <td>
                <Link to={connectorHref(alias, name)}>{name}</Link>
              </td>
              <td>{cls ? shortClass(cls) : "—"}</td>
              <td>{status?.type ?? info?.type ?? "—"}</td>
              <td>
                <span className={stateClass(state)}>{state}</span>
              </td>
              <td>{tasksSummary(status)}</td>
              <td>{status?.connector.worker_id ?? "—"}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

function Plugins({ alias, canWrite }: { alias: string; canWrite: boolean }) {
  const plugins = useQuery({ queryKey: connectKeys.plugins(alias), queryFn: () => fetchPlugins(alias), staleTime: 60_000 });
  return (
    <>
      <h2>Plugins</h2>
      <ErrorAlert error={plugins.error} />
      {plugins.data && plugins.data.length === 0 && (
        <p className="muted">The workers have no connector plugin installed: add plugins to their plugin.path.</p>
      )}
      {plugins.data && plugins.data.length > 0 && (
        <table aria-label="Connector plugins">
          <TableHead columns={["Plugin", "Type", "Version", "Class"]} actions={canWrite} />
          <tbody>
            {plugins.data.map((p) => (
              <tr key={`${p.class} ${p.version ?? ""}`}>
                <td>
                  <span className="plugin-name">{p.name ?? shortClass(p.class)}</span>
                  {p.description && (
                    <span className="muted plugin-description">
                      <ConnectDoc text={p.description} />
                    </span>
                  )}
                </td>
                <td>{p.type}</td>
                <td>{p.version ?? "—"}</td>
                <td className="mono">{p.class}</td>
                {canWrite && (
                  <td>
                    {(p.type === "source" || p.type === "sink") && p.uiEnabled !== false ? (
                      <Link to={newConnectorHref(alias, p.class)}>
                        Create<span className="visually-hidden"> a {p.name ?? shortClass(p.class)} connector</span>
                      </Link>
                    ) : null}
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}
