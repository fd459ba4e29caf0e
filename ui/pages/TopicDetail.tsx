import { useQuery } from "@tanstack/react-query";
import { useRef, useState } from "react";
import { fetchTopic, type TopicDetail, topicKey } from "../api/topics.ts";
import { clusterOf, withCluster } from "../cluster.ts";
import { ErrorAlert, Link, num, TableHead, Tile } from "../components.tsx";
import "../styles/topic.css";
import { number } from "../format.ts";
import { TopicConfigs } from "./TopicConfigs.tsx";
import { AddPartitionsDialog, DeleteRecordsDialog, DeleteTopicDialog } from "./TopicDialogs.tsx";
import { TopicMessages } from "./TopicMessages.tsx";
import { TopicMetadataPanel } from "./TopicMetadata.tsx";
import { ProduceDialog } from "./TopicProduce.tsx";
import { topicQuery } from "./TopicShared.ts";

const TABS = [
  { id: "messages", label: "Messages" },
  { id: "partitions", label: "Partitions" },
  { id: "configs", label: "Configs" },
  { id: "consumers", label: "Consumers" },
  { id: "metadata", label: "Metadata" },
] as const;
type TabId = (typeof TABS)[number]["id"];

function paramsOf(location: string): URLSearchParams {
  const i = location.indexOf("?");
  return new URLSearchParams(i < 0 ? "" : location.slice(i));
}

/**
 * One topic: its figures on top, then a section at a time, the one shown kept in the URL
 * (`?tab=`). Messages, the records themselves, come first for whoever may read them (and is
 * then the section shown without `?tab=`); the others start on the partitions. What the page
 * offers follows what the caller may do on this topic (the answer's `access`), not the roles it
 * holds elsewhere.
 */
export function TopicDetailPage({
  name,
  location,
  canRead: mayReadGroups,
}: {
  name: string;
  location: string;
  /** Roles of the shell: whether group pages (offsets) may be opened; this topic's own rights come with it. */
  canRead: boolean;
  canWrite?: boolean;
}) {
  const cluster = clusterOf(location);
  const params = paramsOf(location);
  const topic = useQuery({ queryKey: topicKey(cluster, name), queryFn: () => fetchTopic(name) });
  const t = topic.data;
  const canRead = t?.access.read ?? false;
  const canWrite = t?.access.write ?? false;
  const tabs = TABS.filter((x) => x.id !== "messages" || canRead);
  const asked = params.get("tab");
  const tab: TabId = tabs.find((x) => x.id === asked)?.id ?? (canRead ? "messages" : "partitions");
  const deleteDialog = useRef<HTMLDialogElement>(null);
  const [deleteRecords, setDeleteRecords] = useState<{ partition: number | "all"; opened: number } | null>(null);
  const [producing, setProducing] = useState<number | null>(null);
  const [growing, setGrowing] = useState<number | null>(null);
  const base = `/topics/${encodeURIComponent(name)}`;
  const tabPath = (id: TabId) => withCluster(`${base}?tab=${id}`, cluster);
  return (
    <section className="page topic-page">
      <div className="topic-head">
        <h1>
          <span className="muted">Topic</span> {name}
        </h1>
        {t && (canWrite || canRead) && (
          <div className="toolbar head-actions">
            {canWrite && (
              <button type="button" onClick={() => setProducing(Date.now())}>
                Produce records…
              </button>
            )}
            {canWrite && (
              <button type="button" className="danger" onClick={() => deleteDialog.current?.showModal()}>
                Delete topic…
              </button>
            )}
          </div>
        )}
      </div>
      <ErrorAlert error={topic.error} />
      {topic.isPending && <p className="muted">Loading the topic…</p>}
      {t && (
        <>
          {t.internalTo && <InternalNotice topic={t} />}
          <div className="tiles">
            <Tile label="Partitions" value={number.format(t.partitions)} />
            <Tile label="Replication" value={number.format(t.replication)} />
            <Tile label="Messages" value={number.format(t.totalMessages)} />
            <Tile label="Messages/s" value={number.format(t.messagesPerSecond)} />
            <Tile label="Key / value" value={`${t.keyType} / ${t.valueType}${t.inferred ? " (inferred)" : ""}`} text />
          </div>

          <nav className="tabs" aria-label="Topic sections">
            <ul>
              {tabs.map((x) => (
                <li key={x.id}>
                  <Link to={tabPath(x.id)} current={x.id === tab}>
                    {x.label}
                  </Link>
                </li>
              ))}
              {canRead && (
                <li className="tab-data">
                  <Link to={withCluster(`/sql?q=${encodeURIComponent(topicQuery(name))}&run=1`, cluster)}>
                    Query in SQL<span aria-hidden="true"> →</span>
                  </Link>
                </li>
              )}
            </ul>
          </nav>

          {tab === "messages" && <TopicMessages key={`${cluster}/${name}`} topic={t} cluster={cluster} location={location} />}
          {tab === "partitions" && (
            <Partitions
              topic={t}
              canWrite={canWrite}
              onDelete={(partition) => setDeleteRecords({ partition, opened: Date.now() })}
              onGrow={() => setGrowing(Date.now())}
            />
          )}
          {tab === "configs" && <TopicConfigs cluster={cluster} name={name} config={t.config} canWrite={canWrite} />}
          {tab === "consumers" && <Consumers topic={t} cluster={cluster} canRead={mayReadGroups} />}
          {tab === "metadata" && <TopicMetadataPanel cluster={cluster} name={name} canWrite={canWrite} />}

          {canWrite && <DeleteTopicDialog dialog={deleteDialog} cluster={cluster} name={name} />}
          {canWrite && deleteRecords && (
            <DeleteRecordsDialog
              key={deleteRecords.opened}
              cluster={cluster}
              topic={t}
              partition={deleteRecords.partition}
              onClosed={() => setDeleteRecords(null)}
            />
          )}
          {canWrite && producing !== null && (
            <ProduceDialog key={producing} cluster={cluster} topic={t} onClosed={() => setProducing(null)} />
          )}
          {canWrite && growing !== null && (
            <AddPartitionsDialog key={growing} cluster={cluster} topic={t} onClosed={() => setGrowing(null)} />
          )}
        </>
      )}
    </section>
  );
}

/** An internal topic says whose it is, and who may touch its records. */
function InternalNotice({ topic }: { topic: TopicDetail }) {
  const owner = topic.internalTo;
  return (
    <p className="notice" data-testid="internal-notice">
      <strong>Internal topic.</strong> {`Its records are ${owner === "Kafka" ? "Kafka's own" : `the machinery of ${owner}`}: `}
      {topic.access.write
        ? "you may read and write them, and a record written here changes that service behind its API."
        : "only an admin without limits reads or writes them. Its partitions, offsets and configs are shown."}{" "}
      The topic list hides it unless “Show internal topics” is on.
    </p>
  );
}

function Partitions({
  topic,
  canWrite,
  onDelete,
  onGrow,
}: {
  topic: TopicDetail;
  canWrite: boolean;
  onDelete: (p: number | "all") => void;
  onGrow: () => void;
}) {
  const hasRecords = topic.messagesPerPartition.some((p) => p.messages > 0);
  // Kafka's own internal topics are not grown by hand (the server refuses it too).
  const growable = canWrite && topic.internalTo !== "Kafka";
  return (
    <>
      <div className="section-head">
        <h2>Partitions</h2>
        {canWrite && (
          <div className="toolbar">
            {growable && (
              <button type="button" className="ghost" onClick={onGrow}>
                Add partitions…
              </button>
            )}
            <button type="button" className="ghost" onClick={() => onDelete("all")} disabled={!hasRecords}>
              Delete records in all partitions…
            </button>
          </div>
        )}
      </div>
      <table aria-label="Partitions">
        <TableHead
          columns={["Partition", num("First offset"), num("End offset"), num("Messages"), num("Leader"), "In sync / replicas"]}
          actions={canWrite}
        />
        <tbody>
          {topic.messagesPerPartition.map((p) => (
            <tr key={p.partition}>
              <td>{p.partition}</td>
              <td className="num">{number.format(p.begin)}</td>
              <td className="num">{number.format(p.end)}</td>
              <td className="num">{number.format(p.messages)}</td>
              <td className="num">{p.leader < 0 ? <span className="error">none</span> : p.leader}</td>
              <td className={p.isr.length < p.replicas.length ? "error" : undefined}>
                {p.isr.join(", ")} / {p.replicas.join(", ")}
              </td>
              {canWrite && (
                <td className="row-actions">
                  <button
                    type="button"
                    className="ghost small"
                    onClick={() => onDelete(p.partition)}
                    disabled={p.messages === 0}
                    aria-label={`Delete records of partition ${p.partition}…`}
                  >
                    Delete records…
                  </button>
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
      {!hasRecords && <p className="muted">No records yet: produce to the topic, and its offsets show here.</p>}
    </>
  );
}

function Consumers({ topic, cluster, canRead }: { topic: TopicDetail; cluster: string | null; canRead: boolean }) {
  return (
    <>
      <h2>Consumer groups</h2>
      {topic.consumers.length === 0 ? (
        <p className="muted">
          No consumer group reads this topic. A group shows here once it commits an offset on it, a share group once it has a start offset.
        </p>
      ) : (
        <table aria-label="Consumer groups">
          <TableHead columns={["Group", "Type", "State", num("Members"), num("Lag"), num("Max partition lag")]} />
          <tbody>
            {topic.consumers.map((g) => (
              <tr key={`${g.type ?? ""}:${g.id}`}>
                <td>
                  {/* The group's page shows its offsets, which a nodata user may not read. */}
                  {canRead ? (
                    <Link to={withCluster(`/consumers/${encodeURIComponent(g.id)}${g.type === "share" ? "?type=share" : ""}`, cluster)}>
                      {g.id}
                    </Link>
                  ) : (
                    g.id
                  )}
                </td>
                <td>{g.type ?? "—"}</td>
                <td>{g.state}</td>
                <td className="num">{g.consumersCount}</td>
                <td className="num">{number.format(g.lag)}</td>
                <td className="num">{number.format(g.maxLag)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}
