import { useQuery } from "@tanstack/react-query";
import { useMemo } from "react";
import { clusterOf } from "../cluster.ts";
import { ErrorAlert, Link, num, TableHead } from "../components.tsx";
import { navigate, replaceParams, subPageOf } from "../router.ts";
import "../styles/processors.css";
import {
  fetchProcessors,
  NEW_PROCESSOR_HREF,
  PROCESSORS_REFRESH_MS,
  processorHref,
  processorKeys,
  stateClass,
  type Viewer,
} from "../api/processors.ts";
import { count } from "../format.ts";
import { ProcessorCreate } from "./ProcessorCreate.tsx";
import { ProcessorDetail } from "./ProcessorDetail.tsx";

/**
 * Stream processors: continuous `INSERT INTO ... SELECT STREAM` programs run by Loupe. The list
 * with their states and figures, the create view with the workbench's editor, a processor's page.
 */
export function ProcessorsPage({ path, location, viewer }: { path: string; location: string; viewer: Viewer }) {
  const route = subPageOf(path, "/processors");
  if (route.page === "new")
    return viewer.canWrite ? (
      <ProcessorCreate />
    ) : (
      <section className="page processors">
        <h1>New stream processor</h1>
        <p className="muted">Creating a stream processor needs the write role.</p>
      </section>
    );
  if (route.page === "detail") return <ProcessorDetail id={route.id} location={location} viewer={viewer} />;
  return <ProcessorList location={location} viewer={viewer} />;
}

function ProcessorList({ location, viewer }: { location: string; viewer: Viewer }) {
  const params = new URLSearchParams(location.includes("?") ? location.slice(location.indexOf("?")) : "");
  const cluster = clusterOf(location);
  const q = params.get("q") ?? "";
  const list = useQuery({ queryKey: processorKeys.list(cluster), queryFn: fetchProcessors, refetchInterval: PROCESSORS_REFRESH_MS });
  const rows = useMemo(() => {
    const needle = q.toLowerCase();
    return (list.data ?? [])
      .filter((p) => [p.name, p.id, p.toTopic, p.user, ...p.fromTopics].some((s) => s.toLowerCase().includes(needle)))
      .sort((a, b) => a.name.localeCompare(b.name));
  }, [list.data, q]);

  return (
    <section className="page processors">
      <h1>Stream processors</h1>
      <ErrorAlert error={list.error} />
      {list.isPending && <p className="muted">Loading the stream processors…</p>}
      {list.data && list.data.length === 0 && (
        <div className="card proc-empty">
          <h2>No stream processor yet</h2>
          <p>
            A stream processor runs an <code>INSERT INTO target SELECT STREAM … FROM source</code> program without end: it reads every new
            record of the source, filters, projects or aggregates it over windows, and writes the result to the target, each record exactly
            once.
          </p>
          {viewer.canWrite ? (
            <button type="button" onClick={() => navigate(NEW_PROCESSOR_HREF)}>
              Create a stream processor…
            </button>
          ) : (
            <p className="muted">Creating one needs the write role: ask an administrator.</p>
          )}
        </div>
      )}
      {list.data && list.data.length > 0 && (
        <>
          <div className="toolbar">
            <label className="search">
              <span>Filter</span>
              <input
                type="search"
                value={q}
                onChange={(e) => replaceParams("/processors", params, { q: e.target.value })}
                placeholder="Name, topic or owner"
              />
            </label>
            <span className="spacer" />
            {viewer.canWrite && (
              <button type="button" onClick={() => navigate(NEW_PROCESSOR_HREF)}>
                Create a stream processor…
              </button>
            )}
          </div>
          {rows.length === 0 ? (
            <p className="muted">No stream processor matches the filter.</p>
          ) : (
            <div className="proc-table-scroll">
              <table aria-label="Stream processors" className="proc-table">
                <TableHead
                  columns={["Name", "State", "Source \u2192 target", num("Runners"), num("In/s"), num("Out/s"), num("Lag"), "Owner"]}
                />
                <tbody>
                  {rows.map((p) => (
                    <tr key={p.id}>
                      <td>
                        <Link to={processorHref(p.id)}>{p.name}</Link>
                      </td>
                      <td>
                        <span className={stateClass(p.deploymentState)}>{p.deploymentState}</span>
                      </td>
                      <td className="mono">
                        {p.fromTopics.join(", ")} → {p.toTopic}
                      </td>
                      <td className="num">{p.runners}</td>
                      <td className="num">{count(p.figures.inPerSec)}</td>
                      <td className="num">{count(p.figures.outPerSec)}</td>
                      <td className="num">{count(p.figures.lag)}</td>
                      <td>{p.user}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </>
      )}
    </section>
  );
}
