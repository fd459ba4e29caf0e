import { useQuery } from "@tanstack/react-query";
import { useRef, useState } from "react";
import { RESERVED_WORDS } from "../../src/sql/parser.ts";
import { clusterOf, withCluster } from "../cluster.ts";
import { Link, Tile } from "../components.tsx";
import { api } from "../session.ts";
import "../styles/topic.css";
import { TopicConfigs } from "./TopicConfigs.tsx";
import { DeleteRecordsDialog, DeleteTopicDialog } from "./TopicDialogs.tsx";
import { TopicMetadataPanel } from "./TopicMetadata.tsx";

export interface TopicDetail {
  topicName: string;
  keyType: string;
  valueType: string;
  inferred: boolean;
  partitions: number;
  replication: number;
  isControlTopic: boolean;
  messagesPerSecond: number;
  totalMessages: number;
  config: TopicConfig[];
  consumers: Array<{ id: string; state: string; consumersCount: number; lag: number; maxLag: number }>;
  messagesPerPartition: Array<{
    partition: number;
    messages: number;
    begin: number;
    end: number;
    leader?: number;
    replicas?: number[];
    isr?: number[];
  }>;
}

export interface TopicConfig {
  configuration: string;
  value: string | null;
  defaultValue: string | null;
  documentation: string | null;
}

export const topicKey = (cluster: string | null, name: string) => ["topic", cluster, name] as const;

export const fetchTopic = (name: string) => api<TopicDetail>(`/api/topics/${encodeURIComponent(name)}`);

export const number = new Intl.NumberFormat("en-US");

const TABS = [
  { id: "partitions", label: "Partitions" },
  { id: "configs", label: "Configs" },
  { id: "consumers", label: "Consumers" },
  { id: "metadata", label: "Metadata" },
] as const;
type TabId = (typeof TABS)[number]["id"];

/** The workbench's first query on a topic: its name in backticks when the dialect needs them. */
export function topicQuery(topic: string): string {
  const bare = /^[A-Za-z_][A-Za-z0-9_]*$/.test(topic) && !RESERVED_WORDS.has(topic.toUpperCase());
  return `SELECT * FROM ${bare ? topic : `\`${topic.replaceAll("`", "``")}\``} LIMIT 100`;
}

function tabOf(location: string): TabId {
  const i = location.indexOf("?");
  const asked = i < 0 ? null : new URLSearchParams(location.slice(i)).get("tab");
  return TABS.find((t) => t.id === asked)?.id ?? "partitions";
}

/**
 * One topic: its figures on top, then a section at a time (partitions, configs, consumers,
 * metadata), the one shown kept in the URL (`?tab=`). Data opens the SQL workbench on the topic,
 * for the roles that may read records.
 */
export function TopicDetailPage({
  name,
  location,
  canWrite,
  canRead,
}: {
  name: string;
  location: string;
  canWrite: boolean;
  canRead: boolean;
}) {
  const cluster = clusterOf(location);
  const tab = tabOf(location);
  const topic = useQuery({ queryKey: topicKey(cluster, name), queryFn: () => fetchTopic(name) });
  const t = topic.data;
  const deleteDialog = useRef<HTMLDialogElement>(null);
  const [deleteRecords, setDeleteRecords] = useState<{ partition: number | "all"; opened: number } | null>(null);
  const base = `/topics/${encodeURIComponent(name)}`;
  const tabPath = (id: TabId) => withCluster(id === "partitions" ? base : `${base}?tab=${id}`, cluster);
  return (
    <section className="page topic-page">
      <div className="topic-head">
        <h1>
          <span className="muted">Topic</span> {name}
        </h1>
        {t && canWrite && (
          <button type="button" className="danger" onClick={() => deleteDialog.current?.showModal()}>
            Delete topic…
          </button>
        )}
      </div>
      {topic.error && (
        <p className="error" role="alert">
          {topic.error.message}
        </p>
      )}
      {topic.isPending && <p className="muted">Loading the topic…</p>}
      {t && (
        <>
          <div className="tiles">
            <Tile label="Partitions" value={number.format(t.partitions)} />
            <Tile label="Replication" value={number.format(t.replication)} />
            <Tile label="Messages" value={number.format(t.totalMessages)} />
            <Tile label="Messages/s" value={number.format(t.messagesPerSecond)} />
            <Tile label="Key / value" value={`${t.keyType} / ${t.valueType}${t.inferred ? " (inferred)" : ""}`} text />
          </div>

          <nav className="tabs" aria-label="Topic sections">
            <ul>
              {TABS.map((x) => (
                <li key={x.id}>
                  <Link to={tabPath(x.id)} current={x.id === tab}>
                    {x.label}
                  </Link>
                </li>
              ))}
              {canRead && (
                <li className="tab-data">
                  <Link to={withCluster(`/sql?q=${encodeURIComponent(topicQuery(name))}`, cluster)}>
                    Data<span aria-hidden="true"> →</span>
                  </Link>
                </li>
              )}
            </ul>
          </nav>

          {tab === "partitions" && (
            <Partitions topic={t} canWrite={canWrite} onDelete={(partition) => setDeleteRecords({ partition, opened: Date.now() })} />
          )}
          {tab === "configs" && <TopicConfigs cluster={cluster} name={name} config={t.config} canWrite={canWrite} />}
          {tab === "consumers" && <Consumers topic={t} cluster={cluster} canRead={canRead} />}
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
        </>
      )}
    </section>
  );
}

/** Cleanup policy `compact` alone keeps records by key: Kafka refuses to delete them by offset. */
export function compactedOnly(topic: TopicDetail): boolean {
  const policy = topic.config.find((c) => c.configuration === "cleanup.policy")?.value ?? "delete";
  return !policy.split(",").some((p) => p.trim() === "delete");
}

function Partitions({ topic, canWrite, onDelete }: { topic: TopicDetail; canWrite: boolean; onDelete: (p: number | "all") => void }) {
  const hasRecords = topic.messagesPerPartition.some((p) => p.messages > 0);
  return (
    <>
      <div className="section-head">
        <h2>Partitions</h2>
        {canWrite && (
          <button type="button" className="ghost" onClick={() => onDelete("all")} disabled={!hasRecords}>
            Delete records in all partitions…
          </button>
        )}
      </div>
      <table aria-label="Partitions">
        <thead>
          <tr>
            <th scope="col">Partition</th>
            <th scope="col" className="num">
              First offset
            </th>
            <th scope="col" className="num">
              End offset
            </th>
            <th scope="col" className="num">
              Messages
            </th>
            <th scope="col" className="num">
              Leader
            </th>
            <th scope="col">In sync / replicas</th>
            {canWrite && (
              <th scope="col">
                <span className="sr-only">Actions</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody>
          {topic.messagesPerPartition.map((p) => (
            <tr key={p.partition}>
              <td>{p.partition}</td>
              <td className="num">{number.format(p.begin)}</td>
              <td className="num">{number.format(p.end)}</td>
              <td className="num">{number.format(p.messages)}</td>
              <td className="num">{p.leader === undefined ? "" : p.leader < 0 ? <span className="error">none</span> : p.leader}</td>
              <td className={p.isr && p.replicas && p.isr.length < p.replicas.length ? "error" : undefined}>
                {p.isr?.join(", ")} / {p.replicas?.join(", ")}
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
        <p className="muted">No consumer group reads this topic. A group shows here once it commits an offset on it.</p>
      ) : (
        <table aria-label="Consumer groups">
          <thead>
            <tr>
              <th scope="col">Group</th>
              <th scope="col">State</th>
              <th scope="col" className="num">
                Members
              </th>
              <th scope="col" className="num">
                Lag
              </th>
              <th scope="col" className="num">
                Max partition lag
              </th>
            </tr>
          </thead>
          <tbody>
            {topic.consumers.map((g) => (
              <tr key={g.id}>
                <td>
                  {/* The group's page shows its offsets, which a nodata user may not read. */}
                  {canRead ? <Link to={withCluster(`/consumers/${encodeURIComponent(g.id)}`, cluster)}>{g.id}</Link> : g.id}
                </td>
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
