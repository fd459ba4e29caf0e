import { useVirtualizer } from "@tanstack/react-virtual";
import { useRef } from "react";
import "../styles/consumers.css";
import { type ConsumerGroupSummary as GroupSummary, useGroupPages } from "../api/consumers.ts";
import { clusterOf, withCluster } from "../cluster.ts";
import { ErrorAlert, Link } from "../components.tsx";
import { number } from "../format.ts";
import { useLoadMore } from "../paging.ts";
import { replaceParams } from "../router.ts";

type SortKey = "lag" | "name" | "state" | "members";
const SORTS: readonly SortKey[] = ["lag", "name", "state", "members"];
const COLUMNS: Array<{ key: SortKey | null; label: string; numeric?: boolean }> = [
  { key: "name", label: "Group" },
  { key: "state", label: "State" },
  { key: null, label: "Type" },
  { key: "members", label: "Members", numeric: true },
  { key: null, label: "Topics" },
  { key: "lag", label: "Lag", numeric: true },
];
const ROW_HEIGHT = 36;

/** Columns whose natural order runs high to low: the most lagging and the most populated first. */
const HIGH_FIRST: ReadonlySet<SortKey> = new Set(["lag", "members"]);

/** What each group protocol is, as the Type column's tooltip says it. */
const TYPE_TITLES: Record<string, string> = {
  classic: "Classic group protocol (JoinGroup/SyncGroup)",
  consumer: "Consumer group protocol of KIP-848 (Kafka 4)",
  share: "Share group (KIP-932): members share partitions, records are acknowledged one by one",
};

/** A share group's page is the group page with `?type=share`: its answers have another shape. */
const groupPath = (g: GroupSummary) => `/consumers/${encodeURIComponent(g.id)}${g.type === "share" ? "?type=share" : ""}`;

/** The page's state, all in the URL: `q` (search), `sort`, `dir` (`rev`: the other way), `cluster`. */
function viewOf(location: string) {
  const params = new URLSearchParams(location.includes("?") ? location.slice(location.indexOf("?")) : "");
  const sort = SORTS.find((k) => k === params.get("sort")) ?? "lag";
  return { params, q: params.get("q") ?? "", sort, reversed: params.get("dir") === "rev" };
}

/**
 * Consumer groups: searched by name as you type and sorted by a column (the most lagging first),
 * by the server (10,000 groups stay quick); rows virtualized, further pages asked as the list scrolls.
 */
export function ConsumersPage({ location }: { location: string }) {
  const cluster = clusterOf(location);
  const view = viewOf(location);
  const groups = useGroupPages(cluster, {
    search: view.q,
    orderBy: view.sort,
    sortOrder: HIGH_FIRST.has(view.sort) !== view.reversed ? "desc" : "asc",
  });

  const set = (changes: Record<string, string | null>) => replaceParams("/consumers", view.params, changes);

  const rows = groups.data?.pages.flatMap((p) => p.items) ?? [];
  const totals = groups.data?.pages[0];

  const scroller = useRef<HTMLDivElement>(null);
  const virtual = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 10,
  });
  useLoadMore(virtual, rows.length, groups);

  return (
    <section className="page">
      <h1>Consumer groups</h1>
      <div className="toolbar">
        <label className="search">
          <span>Search</span>
          <input type="search" value={view.q} onChange={(e) => set({ q: e.target.value })} placeholder="Group id" />
        </label>
        <span className="muted" aria-live="polite" data-testid="group-count">
          {totals ? `${number.format(totals.total)} of ${number.format(totals.unfiltered)} groups` : ""}
        </span>
      </div>
      <ErrorAlert error={groups.error} />
      {groups.isPending && <p className="muted">Loading consumer groups…</p>}
      {totals && rows.length === 0 && (
        <p className="muted">
          {totals.unfiltered === 0
            ? "No consumer group has committed offsets on this cluster yet: groups appear here once a consumer commits."
            : "No group matches the search: try part of its id."}
        </p>
      )}
      {rows.length > 0 && (
        <div className="grid-scroll" ref={scroller}>
          <table
            className="grid"
            aria-label="Consumer groups"
            aria-rowcount={(totals?.total ?? 0) + 1}
            aria-busy={groups.isPlaceholderData || groups.isFetchingNextPage}
          >
            <thead>
              <tr className="grid-row groups-cols" aria-rowindex={1}>
                {COLUMNS.map((c) => {
                  const sorted = c.key !== null && c.key === view.sort;
                  // Shown as the arrow of the actual order: lag and members run high to low by default.
                  const descending = sorted && (c.key === "lag" || c.key === "members") !== view.reversed;
                  return (
                    <th
                      key={c.label}
                      scope="col"
                      className={c.numeric ? "num" : undefined}
                      aria-sort={sorted ? (descending ? "descending" : "ascending") : undefined}
                    >
                      {c.key === null ? (
                        c.label
                      ) : (
                        <button
                          type="button"
                          className="sort"
                          onClick={() => set({ sort: c.key === "lag" ? null : c.key, dir: sorted && !view.reversed ? "rev" : null })}
                        >
                          {c.label}
                          {sorted ? (descending ? " ▼" : " ▲") : ""}
                        </button>
                      )}
                    </th>
                  );
                })}
              </tr>
            </thead>
            <tbody ref={(el) => el?.style.setProperty("height", `${virtual.getTotalSize()}px`)}>
              {virtual.getVirtualItems().map((item) => {
                const g = rows[item.index]!;
                return (
                  <tr
                    key={g.id}
                    aria-rowindex={item.index + 2}
                    className="grid-row groups-cols"
                    ref={(el) => el?.style.setProperty("transform", `translateY(${item.start}px)`)}
                  >
                    <td>
                      <Link to={withCluster(groupPath(g), cluster)}>{g.id}</Link>
                    </td>
                    <td>{g.state}</td>
                    <td title={TYPE_TITLES[g.type]}>{g.type}</td>
                    <td className="num">{g.members}</td>
                    {/* A group on no topic shows a dash: an empty cell collapsed to a line across the row. */}
                    <td title={g.topics.join(", ")}>{g.topics.length > 0 ? g.topics.join(", ") : <span className="muted">—</span>}</td>
                    <td className="num">{number.format(g.lag)}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
