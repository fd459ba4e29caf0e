/**
 * The alerts page: the notifications (newest first, filtered and paged in the URL, with live
 * updates), one notification at its generatorURL (`/alerts?id=<id>`), the settings with their
 * conditions (`/alerts/settings`), and the delivery state of the outbox (`/alerts/deliveries`).
 */
import { useState } from "react";
import { type AlertNotification, type NotificationQuery, useAlertSettings, useNotifications } from "../api/alerts.ts";
import { withCluster } from "../cluster.ts";
import { ErrorAlert, Link, TableHead } from "../components.tsx";
import { replaceParams } from "../router.ts";
import "../styles/alerts.css";
import { AlertDeliveriesView } from "./AlertDeliveries.tsx";
import { AlertDetail } from "./AlertDetail.tsx";
import {
  type AlertsViewer,
  Concerns,
  LiveStatus,
  latest,
  pathOf,
  SeverityTag,
  StateTag,
  titleOf,
  useAlertFeed,
  when,
} from "./AlertParts.tsx";
import { AlertSettingsView } from "./AlertSettings.tsx";

/** Notifications a page of the list shows. */
const PAGE = 50;
/** Notifications kept from the live feed: beyond, the oldest are let go. */
const LIVE_KEEP = 1_000;

const VIEWS = [
  { path: "/alerts", label: "Notifications", level: "nodata" },
  { path: "/alerts/settings", label: "Settings", level: "nodata" },
  { path: "/alerts/deliveries", label: "Delivery status", level: "read" },
] as const;

export function AlertsPage({ path, location, viewer }: { path: string; location: string; viewer: AlertsViewer }) {
  const params = new URLSearchParams(location.includes("?") ? location.slice(location.indexOf("?")) : "");
  const cluster = params.get("cluster");
  const id = params.get("id");
  const view = VIEWS.find((v) => v.path === path);
  if (!view) return null;
  if (view.path === "/alerts" && id) return <AlertDetail key={id} id={id} cluster={cluster} canRead={viewer.canRead} />;
  return (
    <section className="page alerts">
      <h1>Alerts</h1>
      <nav className="alerts-tabs" aria-label="Alert views">
        <ul>
          {VIEWS.filter((v) => v.level === "nodata" || viewer.canRead).map((v) => (
            <li key={v.path}>
              <Link to={withCluster(v.path, cluster)} current={v === view}>
                {v.label}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
      {view.path === "/alerts" && <NotificationsView params={params} cluster={cluster} />}
      {view.path === "/alerts/settings" && <AlertSettingsView cluster={cluster} viewer={viewer} />}
      {view.path === "/alerts/deliveries" && <AlertDeliveriesView cluster={cluster} />}
    </section>
  );
}

interface Filters {
  alertId: string;
  category: string;
  state: string;
  /** datetime-local text, in the browser's zone. */
  from: string;
  to: string;
}

const FILTER_KEYS = ["alertId", "category", "state", "from", "to"] as const;

function filtersOf(params: URLSearchParams): Filters {
  const state = params.get("state");
  return {
    alertId: /^\d{1,9}$/.test(params.get("alertId") ?? "") ? params.get("alertId")! : "",
    category: params.get("category") ?? "",
    state: state === "active" || state === "resolved" ? state : "",
    from: params.get("from") ?? "",
    to: params.get("to") ?? "",
  };
}

/** datetime-local text to epoch ms; undefined when empty or not a time. */
function epoch(local: string): number | undefined {
  const ms = local ? Date.parse(local) : Number.NaN;
  return Number.isNaN(ms) ? undefined : ms;
}

/** Whether a notification from the feed belongs in the list the filters ask for. */
function matches(n: AlertNotification, f: Filters): boolean {
  const started = Date.parse(n.startsAt);
  const from = epoch(f.from);
  const to = epoch(f.to);
  if (f.alertId && n.alertId !== Number(f.alertId)) return false;
  if (f.category && n.labels.category !== f.category) return false;
  if (f.state === "active" && n.endsAt !== null) return false;
  if (f.state === "resolved" && n.endsAt === null) return false;
  if (from !== undefined && started < from) return false;
  if (to !== undefined && started >= to) return false;
  return true;
}

const newestFirst = (a: AlertNotification, b: AlertNotification) =>
  Date.parse(b.startsAt) - Date.parse(a.startsAt) || (a.id < b.id ? 1 : -1);

/**
 * The notifications the filters ask for, a page at a time (`page` in the URL). The feed adds
 * what is raised meanwhile to the first page, and a resolution changes its row in place.
 */
function NotificationsView({ params, cluster }: { params: URLSearchParams; cluster: string | null }) {
  const f = filtersOf(params);
  const page = Math.max(0, Number.parseInt(params.get("page") ?? "0", 10) || 0);
  const query: NotificationQuery = {
    ...(f.alertId ? { alertId: f.alertId } : {}),
    ...(f.category ? { category: f.category } : {}),
    ...(f.state ? { state: f.state } : {}),
    ...(epoch(f.from) !== undefined ? { from: epoch(f.from) } : {}),
    ...(epoch(f.to) !== undefined ? { to: epoch(f.to) } : {}),
    // One more than shown: whether there is an older page.
    limit: PAGE + 1,
    offset: page * PAGE,
  };
  const listed = useNotifications(query);
  const settings = useAlertSettings(cluster);
  const [live, setLive] = useState<ReadonlyMap<string, AlertNotification>>(new Map());
  const feed = useAlertFeed((n) =>
    setLive((was) => {
      const next = new Map(was);
      next.delete(n.id);
      next.set(n.id, n);
      if (next.size > LIVE_KEEP) next.delete(next.keys().next().value!);
      return next;
    }),
  );

  const set = (changes: Record<string, string | null>) => replaceParams("/alerts", params, { page: null, ...changes });
  const listedRows = (listed.data ?? []).slice(0, PAGE);
  const older = (listed.data?.length ?? 0) > PAGE;
  const shownIds = new Set(listedRows.map((n) => n.id));
  const last = listedRows.at(-1);
  // Raised since the list was read: on the first page, when it is not older than the page's last row.
  const fresh =
    page === 0 && listed.data
      ? [...live.values()].filter(
          (n) => !shownIds.has(n.id) && matches(n, f) && (!older || !last || Date.parse(n.startsAt) >= Date.parse(last.startsAt)),
        )
      : [];
  const rows = [...fresh, ...listedRows.map((n) => latest(n, live.get(n.id)))].sort(newestFirst);
  const categories = [...new Set([...Object.keys(settings.data?.categories ?? {}), "External"])];
  const allSettings = Object.values(settings.data?.categories ?? {}).flat();
  const filtered = FILTER_KEYS.some((k) => f[k] !== "");
  const multiCluster = new Set(rows.map((n) => n.labels.cluster)).size > 1;

  return (
    <>
      <div className="toolbar alerts-filters">
        <fieldset className="segmented">
          <legend>State</legend>
          {(["", "active", "resolved"] as const).map((s) => (
            <label key={s || "any"}>
              <input type="radio" name="alert-state" checked={f.state === s} onChange={() => set({ state: s || null })} />
              <span>{s === "" ? "Any" : s === "active" ? "Active" : "Resolved"}</span>
            </label>
          ))}
        </fieldset>
        <label className="search">
          <span>Alert</span>
          <select value={f.alertId} onChange={(e) => set({ alertId: e.target.value || null })}>
            <option value="">Any</option>
            {f.alertId && !allSettings.some((s) => String(s.id) === f.alertId) && <option value={f.alertId}>{f.alertId}</option>}
            {allSettings.map((s) => (
              <option key={s.id} value={String(s.id)}>
                {s.id} · {s.description}
              </option>
            ))}
          </select>
        </label>
        <label className="search">
          <span>Category</span>
          <input list="alert-categories" value={f.category} onChange={(e) => set({ category: e.target.value || null })} placeholder="Any" />
          <datalist id="alert-categories">
            {categories.map((c) => (
              <option key={c} value={c} />
            ))}
          </datalist>
        </label>
        <label className="search">
          <span>From</span>
          <input type="datetime-local" step="1" value={f.from} onChange={(e) => set({ from: e.target.value || null })} />
        </label>
        <label className="search">
          <span>To</span>
          <input type="datetime-local" step="1" value={f.to} onChange={(e) => set({ to: e.target.value || null })} />
        </label>
        {filtered && (
          <button type="button" className="ghost" onClick={() => set(Object.fromEntries(FILTER_KEYS.map((k) => [k, null])))}>
            Clear filters
          </button>
        )}
        <LiveStatus feed={feed} />
      </div>
      <ErrorAlert error={listed.error} />
      {listed.isPending && <p className="muted">Loading the notifications…</p>}
      {listed.data && rows.length === 0 && (
        <p className="muted">
          {filtered || page > 0
            ? "No notification matches the filters."
            : "No notification yet. Alerts raised by the settings' conditions, by changes made through Loupe, or by POST /api/alerts appear here as they come."}
        </p>
      )}
      {rows.length > 0 && (
        <div className="alerts-table-scroll">
          <table className="alerts-table" aria-label="Alert notifications">
            <TableHead columns={["Raised", "Alert", "Summary", "Concerns", "State"]} />
            <tbody>
              {rows.map((n) => (
                <tr key={n.id} className={n.endsAt === null ? "alert-row-active" : undefined}>
                  <td className="alert-time">{when(n.startsAt)}</td>
                  <td className="alert-name">
                    <span>{n.labels.alertname}</span> <SeverityTag severity={n.labels.severity} />
                    <span className="muted alert-id">{n.alertId}</span>
                  </td>
                  <td className="alert-summary">
                    <Link to={pathOf(n.id, cluster)}>{titleOf(n)}</Link>
                  </td>
                  <td className="alert-instance">
                    <Concerns n={n} />
                    {multiCluster && <span className="muted"> on {n.labels.cluster}</span>}
                  </td>
                  <td>
                    <StateTag n={n} />
                    {n.endsAt !== null && <span className="muted alert-ended"> {when(n.endsAt)}</span>}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {(page > 0 || older) && (
        <div className="toolbar alerts-pager">
          <button type="button" className="ghost" disabled={page === 0} onClick={() => set({ page: page > 1 ? String(page - 1) : null })}>
            Newer
          </button>
          <span className="muted" aria-live="polite">
            Page {page + 1}
          </span>
          <button type="button" className="ghost" disabled={!older} onClick={() => set({ page: String(page + 1) })}>
            Older
          </button>
        </div>
      )}
    </>
  );
}
