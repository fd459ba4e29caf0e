import { useQuery } from "@tanstack/react-query";
import { clusterOf, withCluster } from "../cluster.ts";
import { Link } from "../components.tsx";
import { navigate } from "../router.ts";
import { api } from "../session.ts";

interface GroupSummary {
  id: string;
  state: string;
  members: number;
  topics: string[];
  lag: number;
}

const number = new Intl.NumberFormat("en-US");

/** Consumer groups: searched by name (`?q=` in the URL), the most lagging first. */
export function ConsumersPage({ location }: { location: string }) {
  const cluster = clusterOf(location);
  const params = new URLSearchParams(location.includes("?") ? location.slice(location.indexOf("?")) : "");
  const q = params.get("q") ?? "";
  const groups = useQuery({ queryKey: ["groups", cluster], queryFn: () => api<GroupSummary[]>("/api/consumers") });
  const shown = (groups.data ?? [])
    .filter((g) => q === "" || g.id.toLowerCase().includes(q.toLowerCase()))
    .sort((a, b) => b.lag - a.lag || a.id.localeCompare(b.id));

  const search = (value: string) => {
    const next = new URLSearchParams(params);
    if (value) next.set("q", value);
    else next.delete("q");
    const query = next.toString();
    navigate(`/consumers${query ? `?${query}` : ""}`, { replace: true });
  };

  return (
    <section className="page">
      <h1>Consumer groups</h1>
      <div className="toolbar">
        <label className="search">
          <span>Search</span>
          <input type="search" value={q} onChange={(e) => search(e.target.value)} placeholder="Group id" />
        </label>
        <span className="muted" aria-live="polite" data-testid="group-count">
          {groups.data ? `${number.format(shown.length)} of ${number.format(groups.data.length)} groups` : ""}
        </span>
      </div>
      {groups.error && (
        <p className="error" role="alert">
          {groups.error.message}
        </p>
      )}
      {groups.isPending && <p className="muted">Loading consumer groups…</p>}
      {groups.data && shown.length === 0 && (
        <p className="muted">
          {groups.data.length === 0 ? "No consumer group has committed offsets on this cluster yet." : "No group matches the search."}
        </p>
      )}
      {shown.length > 0 && (
        <table aria-label="Consumer groups">
          <thead>
            <tr>
              <th scope="col">Group</th>
              <th scope="col">State</th>
              <th scope="col" className="num">
                Members
              </th>
              <th scope="col">Topics</th>
              <th scope="col" className="num">
                Lag
              </th>
            </tr>
          </thead>
          <tbody>
            {shown.map((g) => (
              <tr key={g.id}>
                <td>
                  <Link to={withCluster(`/consumers/${encodeURIComponent(g.id)}`, cluster)}>{g.id}</Link>
                </td>
                <td>{g.state}</td>
                <td className="num">{g.members}</td>
                <td>{g.topics.join(", ")}</td>
                <td className="num">{number.format(g.lag)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
