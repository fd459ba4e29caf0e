import { useQuery } from "@tanstack/react-query";
import type { ReactNode } from "react";
import type { QuorumView } from "../../src/domains/cluster/schemas.ts";
import { type ClusterOverview, fetchHealth, fetchOverview, type Health } from "../api/cluster.ts";
import { clusterOf, withCluster } from "../cluster.ts";
import { Link, num, TableHead } from "../components.tsx";
import { useLocation } from "../router.ts";
import { useCan } from "../session.ts";
import "../styles/overview.css";
import { number } from "../format.ts";

export type { Health };

type PartitionHealth = ClusterOverview["offline"]["partitions"][number];

/** How often the page asks again: the lag snapshot and Metadata are cheap at this pace. */
const REFRESH_MS = 10_000;

/**
 * The cluster at a glance: brokers and controller, topic and partition counts, the partitions
 * that are under-replicated or offline, total consumer lag, and the health of the store and of
 * every cluster connection. Refreshed every 10 s while the tab is visible.
 */
export function OverviewPage({ health }: { health: Health | null }) {
  const cluster = clusterOf(useLocation());
  const overview = useQuery({
    queryKey: ["cluster", cluster],
    queryFn: fetchOverview,
    refetchInterval: REFRESH_MS,
  });
  // The shell's answer first; then the page's own, so the connections refresh with the rest.
  // /api/health answers 503 when the store is down: the shell's answer stays then.
  const healthNow = useQuery({ queryKey: ["health"], queryFn: fetchHealth, refetchInterval: REFRESH_MS });
  const shownHealth = healthNow.data ?? health;
  const data = overview.data;
  const topicLink = (topic: string) => withCluster(`/topics/${encodeURIComponent(topic)}`, cluster);
  const canRead = useCan("read");
  const groups = (n: number) => `records, ${number.format(n)} group${n === 1 ? "" : "s"}`;

  return (
    <section className="page overview">
      <div className="overview-head">
        <h1>Overview</h1>
        <span className="muted" aria-live="polite" data-testid="overview-updated">
          {data ? `Cluster ${data.cluster} · updated ${new Date(overview.dataUpdatedAt).toLocaleTimeString()}` : ""}
        </span>
        <button type="button" className="ghost" onClick={() => void overview.refetch()} disabled={overview.isFetching}>
          {overview.isFetching ? "Refreshing…" : "Refresh"}
        </button>
      </div>
      {overview.error && (
        <p className="error" role="alert">
          {data ? "The last refresh failed (the figures below are older): " : ""}
          {overview.error.message}
        </p>
      )}
      {overview.isPending && <p className="muted">Loading the cluster…</p>}
      {data && (
        <>
          <div className="tiles" data-testid="overview-figures">
            <Figure label="Brokers" value={number.format(data.brokers.length)} />
            <Figure
              label="Controller"
              value={data.quorum ? `Node ${data.quorum.leaderId}` : data.controllerId >= 0 ? `Broker ${data.controllerId}` : "Unknown"}
              note={data.quorum ? `active, epoch ${number.format(data.quorum.leaderEpoch)}` : undefined}
            />
            <Figure
              label="Topics"
              value={number.format(data.topics)}
              note={data.internalTopics > 0 ? `and ${number.format(data.internalTopics)} internal` : undefined}
            />
            <Figure label="Partitions" value={number.format(data.partitions)} />
            <Figure
              label="Under-replicated"
              value={number.format(data.underReplicated.count)}
              tone={data.underReplicated.count > 0 ? "warn" : "ok"}
            />
            <Figure label="Offline" value={number.format(data.offline.count)} tone={data.offline.count > 0 ? "bad" : "ok"} />
            <Figure
              label="Consumer lag"
              value={data.lag ? number.format(data.lag.total) : "Unknown"}
              note={
                data.lag ? (
                  // The groups' page needs the read role: nodata gets the figure without the link.
                  canRead ? (
                    <Link to={withCluster("/consumers", cluster)}>{groups(data.lag.groups)}</Link>
                  ) : (
                    groups(data.lag.groups)
                  )
                ) : undefined
              }
            />
          </div>
          {data.lagError && (
            <p className="error" role="alert">
              Consumer lag could not be read: {data.lagError}
            </p>
          )}

          <h2>Brokers</h2>
          {data.brokers.length === 0 ? (
            <p className="muted">The cluster named no broker.</p>
          ) : (
            <table aria-label="Brokers">
              <TableHead columns={["ID", "Host", num("Port"), "Rack", num("Leader of"), num("Replicas")]} />
              <tbody>
                {data.brokers.map((b) => (
                  <tr key={b.id}>
                    <td>
                      {b.id}
                      {b.id === (data.quorum?.leaderId ?? data.controllerId) && <span className="badge">controller</span>}
                    </td>
                    <td>{b.host}</td>
                    <td className="num">{b.port}</td>
                    <td>{b.rack ?? <span className="muted">none</span>}</td>
                    <td className="num">{number.format(b.leaders)}</td>
                    <td className="num">{number.format(b.replicas)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}

          <h2>Controller quorum</h2>
          {data.quorumError && (
            <p className="error" role="alert">
              The controller quorum could not be read: {data.quorumError}
            </p>
          )}
          {data.quorum ? (
            <QuorumTable quorum={data.quorum} />
          ) : (
            !data.quorumError && <p className="muted">This cluster has no KRaft controller quorum (its brokers use ZooKeeper).</p>
          )}
        </>
      )}

      <h2>Connections</h2>
      {!shownHealth ? (
        <p className="muted">Checking the store and the clusters…</p>
      ) : (
        <table aria-label="Connections">
          <TableHead columns={["Name", "Kind", "Status", num("Brokers"), num("Latency"), "Problem"]} />
          <tbody>
            <tr>
              <td>Loupe store</td>
              <td>SQLite</td>
              <td>
                <Status up={shownHealth.store.status === "UP"} />
              </td>
              <td className="num">-</td>
              <td className="num">-</td>
              <td>{shownHealth.store.error ?? ""}</td>
            </tr>
            {shownHealth.clusters.map((c) => (
              <tr key={c.name}>
                <td>{c.name}</td>
                <td>Kafka cluster{c.default ? " (default)" : ""}</td>
                <td>
                  <Status up={c.status === "UP"} />
                </td>
                <td className="num">{c.brokers ?? "-"}</td>
                <td className="num">{c.latencyMs !== undefined ? `${c.latencyMs} ms` : "-"}</td>
                <td className="overview-problem">{c.error ?? ""}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {shownHealth && <p className="muted overview-version">Loupe {shownHealth.version}</p>}
      {data && (
        <>
          <h2>Partition health</h2>
          {data.underReplicated.count === 0 && data.offline.count === 0 ? (
            <p className="muted" data-testid="partitions-healthy">
              All {number.format(data.partitions)} partitions have a leader and every replica in sync.
            </p>
          ) : (
            <>
              <PartitionTable title="Offline partitions" list={data.offline} link={topicLink} />
              <PartitionTable title="Under-replicated partitions" list={data.underReplicated} link={topicLink} />
            </>
          )}
        </>
      )}
    </section>
  );
}

/** A figure in the row of tiles; `tone` colours a count that is good or bad news. */
function Figure({ label, value, note, tone }: { label: string; value: string; note?: ReactNode; tone?: "ok" | "warn" | "bad" }) {
  return (
    <div className={`tile${tone ? ` tile-${tone}` : ""}`}>
      <span className="muted">{label}</span>
      <strong>{value}</strong>
      {note && <span className="muted overview-note">{note}</span>}
    </div>
  );
}

function Status({ up }: { up: boolean }) {
  return <span className={`status ${up ? "status-up" : "status-down"}`}>{up ? "Up" : "Down"}</span>;
}

function PartitionTable({ title, list, link }: { title: string; list: ClusterOverview["offline"]; link: (topic: string) => string }) {
  if (list.count === 0) return null;
  const ids = (nodes: number[]) => (nodes.length ? nodes.join(", ") : "none");
  return (
    <>
      <h3>
        {title} <span className="muted">({number.format(list.count)})</span>
      </h3>
      <table aria-label={title}>
        <TableHead columns={["Topic", num("Partition"), "Leader", "Replicas", "In sync", "Offline replicas"]} />
        <tbody>
          {list.partitions.map((p: PartitionHealth) => (
            <tr key={`${p.topic}/${p.partition}`}>
              <td>
                <Link to={link(p.topic)}>{p.topic}</Link>
              </td>
              <td className="num">{p.partition}</td>
              <td>{p.leader >= 0 ? p.leader : <span className="error">none</span>}</td>
              <td>{ids(p.replicas)}</td>
              <td>{ids(p.isr)}</td>
              <td>{ids(p.offlineReplicas)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {list.count > list.partitions.length && (
        <p className="muted">
          The first {list.partitions.length} of {number.format(list.count)} are listed.
        </p>
      )}
    </>
  );
}

/** How long ago, in seconds up to two minutes, then minutes: a voter fetches every few hundred ms. */
function since(ms: number | null, now: number): string {
  if (ms === null) return "unknown";
  const s = Math.max(0, Math.round((now - ms) / 1000));
  return s < 120 ? `${s} s ago` : `${Math.round(s / 60)} min ago`;
}

/**
 * The KRaft metadata log's replicas as the active controller sees them: the voters (the
 * controllers) and the observers (brokers), each with how far it is behind the high watermark.
 */
function QuorumTable({ quorum }: { quorum: QuorumView }) {
  const now = Date.now();
  const rows = [...quorum.voters.map((r) => ({ ...r, role: "voter" })), ...quorum.observers.map((r) => ({ ...r, role: "observer" }))];
  return (
    <>
      <p className="muted">
        Leader node {quorum.leaderId}, epoch {number.format(quorum.leaderEpoch)}, high watermark {number.format(quorum.highWatermark)}.
      </p>
      <table aria-label="Controller quorum">
        <thead>
          <tr>
            <th scope="col">Node</th>
            <th scope="col">Role</th>
            <th scope="col" className="num">
              Log end offset
            </th>
            <th scope="col" className="num">
              Lag
            </th>
            <th scope="col">Last fetch</th>
            <th scope="col">Last caught up</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={`${r.role}-${r.id}`}>
              <td>
                {r.id}
                {r.id === quorum.leaderId && r.role === "voter" && <span className="badge">leader</span>}
              </td>
              <td>{r.role}</td>
              <td className="num">{number.format(r.logEndOffset)}</td>
              <td className="num">{number.format(r.lag)}</td>
              <td>{since(r.lastFetchTimestamp, now)}</td>
              <td>{since(r.lastCaughtUpTimestamp, now)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
