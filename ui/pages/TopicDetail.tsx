import { useQuery } from "@tanstack/react-query";
import { useRef } from "react";
import { clusterOf } from "../cluster.ts";
import { Tile } from "../components.tsx";
import { api } from "../session.ts";
import { DeleteTopicDialog } from "./TopicDialogs.tsx";

interface TopicDetail {
  topicName: string;
  keyType: string;
  valueType: string;
  inferred: boolean;
  partitions: number;
  replication: number;
  isControlTopic: boolean;
  messagesPerSecond: number;
  totalMessages: number;
  config: Array<{ configuration: string; value: string | null; defaultValue: string | null; documentation: string | null }>;
  consumers: Array<{ id: string; state: string; consumersCount: number; lag: number; maxLag: number }>;
  messagesPerPartition: Array<{ partition: number; messages: number; begin: number; end: number }>;
}

const number = new Intl.NumberFormat("en-US");

/** The configs set on the topic first (what an operator looks for), then the rest, each by name. */
function overridesFirst(config: TopicDetail["config"]): TopicDetail["config"] {
  const set = (c: TopicDetail["config"][number]) => (c.value !== c.defaultValue ? 0 : 1);
  return [...config].sort((a, b) => set(a) - set(b) || a.configuration.localeCompare(b.configuration));
}

/** One topic: its figures, partitions with offsets, consumer groups with lag, and configs (overrides marked). */
export function TopicDetailPage({ name, location, canWrite }: { name: string; location: string; canWrite: boolean }) {
  const cluster = clusterOf(location);
  const topic = useQuery({
    queryKey: ["topic", cluster, name],
    queryFn: () => api<TopicDetail>(`/api/topics/${encodeURIComponent(name)}`),
  });
  const t = topic.data;
  const deleteDialog = useRef<HTMLDialogElement>(null);
  return (
    <section className="page">
      <h1>
        <span className="muted">Topic</span> {name}
      </h1>
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

          {canWrite && (
            <div className="toolbar actions">
              <button type="button" className="danger" onClick={() => deleteDialog.current?.showModal()}>
                Delete topic…
              </button>
            </div>
          )}

          <h2>Partitions</h2>
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
              </tr>
            </thead>
            <tbody>
              {t.messagesPerPartition.map((p) => (
                <tr key={p.partition}>
                  <td>{p.partition}</td>
                  <td className="num">{number.format(p.begin)}</td>
                  <td className="num">{number.format(p.end)}</td>
                  <td className="num">{number.format(p.messages)}</td>
                </tr>
              ))}
            </tbody>
          </table>

          <h2>Consumer groups</h2>
          {t.consumers.length === 0 ? (
            <p className="muted">No consumer group reads this topic.</p>
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
                {t.consumers.map((g) => (
                  <tr key={g.id}>
                    <td>{g.id}</td>
                    <td>{g.state}</td>
                    <td className="num">{g.consumersCount}</td>
                    <td className="num">{number.format(g.lag)}</td>
                    <td className="num">{number.format(g.maxLag)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}

          <h2>Configuration</h2>
          <table aria-label="Configuration">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Value</th>
                <th scope="col">Default</th>
              </tr>
            </thead>
            <tbody>
              {overridesFirst(t.config).map((c) => {
                const overridden = c.value !== c.defaultValue;
                return (
                  <tr key={c.configuration} className={overridden ? "overridden" : undefined}>
                    <td title={c.documentation ?? undefined}>{c.configuration}</td>
                    <td>
                      {c.value ?? "—"}
                      {overridden && <span className="badge">set</span>}
                    </td>
                    <td className="muted">{c.defaultValue ?? "—"}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
          {canWrite && <DeleteTopicDialog dialog={deleteDialog} cluster={cluster} name={name} />}
        </>
      )}
    </section>
  );
}
