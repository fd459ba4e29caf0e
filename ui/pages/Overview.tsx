import { useEffect, useState } from "react";
import { Tile } from "../components.tsx";
import { api } from "../session.ts";

export interface Health {
  status: "UP" | "DEGRADED" | "DOWN";
  version: string;
  store: { status: "UP" | "DOWN"; error?: string };
  clusters: Array<{ name: string; default: boolean; status: "UP" | "DOWN"; brokers?: number; error?: string }>;
}

interface TopicItem {
  topicName: string;
  partitions: number;
  isControlTopic: boolean;
}

/** The cluster at a glance: connections, store, topics and partitions. */
export function OverviewPage({ health }: { health: Health | null }) {
  const [topics, setTopics] = useState<TopicItem[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    api<TopicItem[]>("/api/topics").then(setTopics, (e: Error) => setError(e.message));
  }, []);
  const user = topics?.filter((t) => !t.isControlTopic) ?? [];
  return (
    <section>
      <h1>Overview</h1>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      <div className="tiles">
        <Tile label="Service" value={health?.status ?? "…"} />
        <Tile label="Store" value={health?.store.status ?? "…"} />
        <Tile label="Topics" value={topics ? String(user.length) : "…"} />
        <Tile label="Partitions" value={topics ? String(user.reduce((n, t) => n + t.partitions, 0)) : "…"} />
      </div>
      <h2>Clusters</h2>
      <table>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Status</th>
            <th scope="col">Brokers</th>
          </tr>
        </thead>
        <tbody>
          {(health?.clusters ?? []).map((c) => (
            <tr key={c.name}>
              <td>{c.name}</td>
              <td>{c.status}</td>
              <td>{c.brokers ?? "-"}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
