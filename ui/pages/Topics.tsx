import { useVirtualizer } from "@tanstack/react-virtual";
import { useRef } from "react";
import { useTopicPages } from "../api/topics.ts";
import { clusterOf, withCluster } from "../cluster.ts";
import { ErrorAlert, Link } from "../components.tsx";
import { useLoadMore } from "../paging.ts";
import { replaceParams } from "../router.ts";
import "../styles/topic-list.css";
import { bytes, number } from "../format.ts";
import { CreateTopicDialog } from "./TopicDialogs.tsx";

type SortKey = "name" | "partitions" | "messages" | "size" | "rate" | "lag";
const SORTS: readonly SortKey[] = ["name", "partitions", "messages", "size", "rate", "lag"];
const COLUMNS: Array<{ key: SortKey | null; label: string; numeric?: boolean }> = [
  { key: "name", label: "Name" },
  { key: "partitions", label: "Partitions", numeric: true },
  { key: null, label: "Replicas", numeric: true },
  { key: "messages", label: "Messages", numeric: true },
  { key: "size", label: "Size", numeric: true },
  { key: "rate", label: "Messages/s", numeric: true },
  { key: "lag", label: "Lag", numeric: true },
  { key: null, label: "Key / value" },
];
const ROW_HEIGHT = 36;

/** The page's state, all in the URL: `q` (search), `sort`, `dir`, `internal`, `cluster`. */
function viewOf(location: string) {
  const params = new URLSearchParams(location.includes("?") ? location.slice(location.indexOf("?")) : "");
  const sort = SORTS.find((k) => k === params.get("sort")) ?? "name";
  return { params, q: params.get("q") ?? "", sort, desc: params.get("dir") === "desc", internal: params.get("internal") === "1" };
}

/**
 * Topics: searched as you type, sorted by a column, internal topics hidden unless asked, all by
 * the server (10,000 topics stay quick); rows virtualized, further pages asked as the list scrolls.
 */
export function TopicsPage({ location, canWrite }: { location: string; canWrite: boolean }) {
  const cluster = clusterOf(location);
  const view = viewOf(location);
  const topics = useTopicPages(cluster, {
    search: view.q,
    orderBy: view.sort,
    sortOrder: view.desc ? "desc" : "asc",
    internal: view.internal ? "1" : "0",
  });

  const set = (changes: Record<string, string | null>) => replaceParams("/topics", view.params, changes);

  const rows = topics.data?.pages.flatMap((p) => p.items) ?? [];
  const totals = topics.data?.pages[0];
  const hiddenInternal = totals?.controlTopics ?? 0;

  const scroller = useRef<HTMLDivElement>(null);
  const createDialog = useRef<HTMLDialogElement>(null);
  const virtual = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 10,
  });
  useLoadMore(virtual, rows.length, topics);

  return (
    <section className="page">
      <h1>Topics</h1>
      <div className="toolbar">
        <label className="search">
          <span>Search</span>
          <input type="search" value={view.q} onChange={(e) => set({ q: e.target.value })} placeholder="Topic name" />
        </label>
        <label className="check">
          <input type="checkbox" checked={view.internal} onChange={(e) => set({ internal: e.target.checked ? "1" : null })} />
          <span>Show internal topics</span>
        </label>
        {canWrite && (
          <button type="button" onClick={() => createDialog.current?.showModal()}>
            Create topic…
          </button>
        )}
        <span className="muted" aria-live="polite" data-testid="topic-count">
          {totals
            ? `${number.format(totals.total)} of ${number.format(totals.unfiltered)} topics${!view.internal && hiddenInternal > 0 ? ` (${hiddenInternal} internal hidden)` : ""}`
            : ""}
        </span>
      </div>
      <ErrorAlert error={topics.error} />
      {topics.isPending && <p className="muted">Loading topics…</p>}
      {totals && rows.length === 0 && (
        <p className="muted">
          {totals.unfiltered === 0 ? "No topics yet: create one through the API or your Kafka tools." : "No topic matches the search."}
        </p>
      )}
      <div className="grid-scroll" ref={scroller}>
        <table
          className="grid"
          aria-label="Topics"
          aria-rowcount={(totals?.total ?? 0) + 1}
          aria-busy={topics.isPlaceholderData || topics.isFetchingNextPage}
        >
          <thead>
            <tr className="grid-row topic-list-cols" aria-rowindex={1}>
              {COLUMNS.map((c) => {
                const sorted = c.key !== null && c.key === view.sort;
                return (
                  <th
                    key={c.label}
                    scope="col"
                    className={c.numeric ? "num" : undefined}
                    aria-sort={sorted ? (view.desc ? "descending" : "ascending") : undefined}
                  >
                    {c.key === null ? (
                      c.label
                    ) : (
                      <button
                        type="button"
                        className="sort"
                        onClick={() => set({ sort: c.key, dir: sorted && !view.desc ? "desc" : null })}
                      >
                        {c.label}
                        {sorted ? (view.desc ? " ▼" : " ▲") : ""}
                      </button>
                    )}
                  </th>
                );
              })}
            </tr>
          </thead>
          <tbody ref={(el) => el?.style.setProperty("height", `${virtual.getTotalSize()}px`)}>
            {virtual.getVirtualItems().map((item) => {
              const t = rows[item.index]!;
              const href = withCluster(`/topics/${encodeURIComponent(t.topicName)}`, cluster);
              return (
                <tr
                  key={t.topicName}
                  aria-rowindex={item.index + 2}
                  className="grid-row topic-list-cols"
                  ref={(el) => el?.style.setProperty("transform", `translateY(${item.start}px)`)}
                >
                  <td title={t.topicName}>
                    <Link to={href}>{t.topicName}</Link>
                    {t.isControlTopic && <span className="badge topic-badge">internal</span>}
                  </td>
                  <td className="num">{t.partitions}</td>
                  <td className="num">{t.replication}</td>
                  <td className="num">{number.format(t.totalMessages)}</td>
                  <td className="num">{bytes(t.sizeBytes)}</td>
                  <td className="num">{number.format(t.messagesPerSecond)}</td>
                  <td className="num">{t.lag === null || t.lag === undefined ? "—" : number.format(t.lag)}</td>
                  <td title={t.typesKnown === false ? undefined : `${t.keyType} / ${t.valueType}${t.inferred ? " (inferred)" : ""}`}>
                    {t.typesKnown === false ? (
                      <span className="muted" title="No types are stored and the topic's page has not guessed them from its records yet">
                        not known yet
                      </span>
                    ) : (
                      `${t.keyType} / ${t.valueType}${t.inferred ? " (inferred)" : ""}`
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      {canWrite && <CreateTopicDialog dialog={createDialog} cluster={cluster} />}
    </section>
  );
}
