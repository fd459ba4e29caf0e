import { useQuery } from "@tanstack/react-query";
import { useMemo } from "react";
import { fetchRedrives, NEW_REDRIVE_HREF, REDRIVE_REFRESH_MS, type RedriveViewer, redriveHref, redriveKeys } from "../api/redrive.ts";
import { clusterOf } from "../cluster.ts";
import { ErrorAlert, Link, num, TableHead } from "../components.tsx";
import { count } from "../format.ts";
import { navigate, replaceParams, subPageOf } from "../router.ts";
import "../styles/processors.css";
import "../styles/redrive.css";
import { when } from "./AccessList.tsx";
import { RedriveCreatePage } from "./RedriveCreate.tsx";
import { RedriveDetail } from "./RedriveDetail.tsx";
import { progressText, redriveStateClass, targetOf } from "./RedriveShared.ts";

/**
 * Dead-letter redrive: jobs that copy a topic's records once, exactly once, to a topic or to the
 * topic a header names. The list, the create form, a job's page (dry run, progress, actions).
 */
export function RedrivesPage({ path, location, viewer }: { path: string; location: string; viewer: RedriveViewer }) {
  const route = subPageOf(path, "/redrives");
  const cluster = clusterOf(location);
  if (route.page === "new") return <RedriveCreatePage cluster={cluster} />;
  if (route.page === "detail") return <RedriveDetail id={route.id} location={location} viewer={viewer} />;
  return <RedriveList location={location} viewer={viewer} />;
}

function RedriveList({ location, viewer }: { location: string; viewer: RedriveViewer }) {
  const params = new URLSearchParams(location.includes("?") ? location.slice(location.indexOf("?")) : "");
  const cluster = clusterOf(location);
  const q = params.get("q") ?? "";
  const list = useQuery({ queryKey: redriveKeys.list(cluster), queryFn: fetchRedrives, refetchInterval: REDRIVE_REFRESH_MS });
  const rows = useMemo(() => {
    const needle = q.toLowerCase();
    return (list.data ?? [])
      .filter((j) =>
        [j.name, j.id, j.topic, j.target ?? "", j.targetHeader ?? "", j.owner, j.state].some((s) => s.toLowerCase().includes(needle)),
      )
      .sort((a, b) => b.createdAt - a.createdAt);
  }, [list.data, q]);
  const create = viewer.canWrite && (
    <button type="button" onClick={() => navigate(NEW_REDRIVE_HREF)}>
      Create a redrive job…
    </button>
  );

  return (
    <section className="page redrive">
      <h1>Redrive jobs</h1>
      <ErrorAlert error={list.error} />
      {list.isPending && <p className="muted">Loading the redrive jobs…</p>}
      {list.data && list.data.length === 0 && (
        <div className="card redrive-empty">
          <h2>No redrive job yet</h2>
          <p>
            A redrive job copies a topic's records once, exactly once, at a rate you choose: a dead-letter queue back to the topics its
            records came from (the topic a header names), or any range of a topic to another topic, filtered by a condition. A dry run shows
            what it would write before it starts.
          </p>
          {create || <p className="muted">Creating one needs the write role: ask an administrator.</p>}
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
                onChange={(e) => replaceParams("/redrives", params, { q: e.target.value })}
                placeholder="Name, topic, owner or state"
              />
            </label>
            <span className="spacer" />
            {create}
          </div>
          {rows.length === 0 ? (
            <p className="muted">No redrive job matches the filter.</p>
          ) : (
            <div className="redrive-table-scroll">
              <table aria-label="Redrive jobs" className="redrive-table">
                <TableHead columns={["Name", "State", "Source → target", "Filter", num("Progress"), num("Rate"), "Owner", "Created"]} />
                <tbody>
                  {rows.map((j) => (
                    <tr key={j.id}>
                      <td className="redrive-nowrap">
                        <Link to={redriveHref(j.id)}>{j.name}</Link>
                      </td>
                      <td>
                        <span className={redriveStateClass(j.state)}>{j.state}</span>
                      </td>
                      <td className="mono">
                        {j.topic} → {targetOf(j)}
                      </td>
                      <td className="mono">{j.where ?? <span className="muted">every record</span>}</td>
                      <td className="num">{progressText(j)}</td>
                      <td className="num">{count(j.ratePerSecond)}/s</td>
                      <td>{j.owner}</td>
                      <td className="redrive-nowrap">{when(j.createdAt)}</td>
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
