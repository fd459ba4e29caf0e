/**
 * What the alert views share: the live feed of `/api/sse/alerts`, a notification's state,
 * severity and times in words, and the pages of Loupe it concerns (a topic, a group, a broker).
 */
import { type ReactNode, useEffect, useRef, useState } from "react";
import type { AlertNotification, Delivery } from "../api/alerts.ts";
import { withCluster } from "../cluster.ts";
import { Link, num, TableHead } from "../components.tsx";
import { duration } from "../format.ts";
import { openFeed } from "../sse.ts";
import { linksOf, TOPIC_EVENTS } from "./alert-links.ts";

/** What the signed-in user may do on the alerts page: read deliveries (read), change conditions (write), settings (admin). */
export interface AlertsViewer {
  canWrite: boolean;
  canRead: boolean;
  canAdmin: boolean;
}

export interface FeedState {
  state: "connecting" | "open" | "closed" | "error";
  why?: string;
}

/**
 * The alert stream while the view is shown: each notification as it is raised, and again with
 * its `endsAt` when it is resolved (the same id). Closed when the view goes.
 */
export function useAlertFeed(onEvent: (n: AlertNotification) => void): FeedState {
  const handler = useRef(onEvent);
  handler.current = onEvent;
  const [feed, setFeed] = useState<FeedState>({ state: "connecting" });
  useEffect(() => {
    const opened = openFeed<AlertNotification>(
      "/api/sse/alerts",
      (n) => handler.current(n),
      (state, why) => setFeed(why ? { state, why } : { state }),
    );
    return () => opened.close();
  }, []);
  return feed;
}

/** The feed's state as the toolbar's pill says it (a status: read out when it changes). */
export function LiveStatus({ feed }: { feed: FeedState }) {
  return (
    <span className={`live live-${feed.state}`} role="status" data-testid="live">
      {feed.state === "open"
        ? "Live"
        : feed.state === "connecting"
          ? "Connecting…"
          : `Live updates stopped${feed.why ? `: ${feed.why}` : ""}: reload the page to start them again`}
    </span>
  );
}

export const when = (iso: string | null) => (iso === null ? "—" : new Date(iso).toLocaleString());

/** Active, or resolved. */
export function StateTag({ n }: { n: AlertNotification }) {
  if (n.endsAt === null) return <span className="alert-tag alert-active">Active</span>;
  return <span className="alert-tag alert-resolved">Resolved</span>;
}

/** How long it held: until its end, or until now while it is active. */
export const lasted = (n: AlertNotification, now = Date.now()) =>
  duration(Math.max(0, (n.endsAt === null ? now : Date.parse(n.endsAt)) - Date.parse(n.startsAt)));

export function SeverityTag({ severity }: { severity: string | undefined }) {
  const s = (severity ?? "INFO").toUpperCase();
  return <span className={`alert-tag alert-severity-${s.toLowerCase()}`}>{s}</span>;
}

/** A notification's name in a list: its summary, or its alert name when it has none. */
export const titleOf = (n: AlertNotification) => n.annotations.summary || n.labels.alertname || `Alert ${n.alertId}`;

/** The notification's own page: its generatorURL's path in this UI, on its cluster. */
export const pathOf = (id: string, cluster: string | null) => withCluster(`/alerts?${new URLSearchParams({ id })}`, cluster);

/** What a notification is about, in words (a broker, a worker) unless its links name it already. */
const instanceText = (n: AlertNotification) => (n.labels.group || TOPIC_EVENTS.has(n.alertId) ? "" : (n.labels.instance ?? ""));

/** What it concerns: its instance in words, and a link to each page of Loupe it concerns. */
export function Concerns({ n }: { n: AlertNotification }) {
  return (
    <>
      {instanceText(n) && <span className="alert-instance-text">{instanceText(n)}</span>}
      {linksOf(n).map((l) => (
        <span key={l.to} className="alert-link">
          <Link to={l.to}>{l.label}</Link>
        </span>
      ))}
    </>
  );
}

/** The later of two versions of a notification: the one that tells its end (a feed that missed it is behind a listing). */
export const latest = (listed: AlertNotification, streamed: AlertNotification | undefined) =>
  streamed && !(streamed.endsAt === null && listed.endsAt !== null) ? streamed : listed;

/** Delivery rows: channel, state, attempts, last error, and when it goes next or went. */
export function DeliveryTable({
  rows,
  label,
  notification,
}: {
  rows: Delivery[];
  label: string;
  notification?: (d: Delivery) => ReactNode;
}) {
  return (
    <div className="alerts-table-scroll">
      <table className="alerts-table" aria-label={label}>
        <TableHead
          columns={[
            ...(notification ? ["Notification"] : []),
            "Channel",
            "State",
            num("Failed attempts"),
            "Last error",
            "Next attempt",
            "Sent",
          ]}
        />
        <tbody>
          {rows.map((d) => (
            <tr key={`${d.notification}|${d.channel}`}>
              {notification && <td>{notification(d)}</td>}
              <td className="alert-value">{d.channel}</td>
              <td>
                <span className={`alert-tag alert-delivery-${d.state.toLowerCase()}`}>{DELIVERY_WORDS[d.state]}</span>
              </td>
              <td className="num">{d.attempts}</td>
              <td className="alert-value">{d.lastError ?? <span className="muted">—</span>}</td>
              <td>{d.nextAttemptAt === null ? "—" : new Date(d.nextAttemptAt).toLocaleString()}</td>
              <td>{d.sentAt === null ? "—" : new Date(d.sentAt).toLocaleString()}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

const DELIVERY_WORDS: Record<Delivery["state"], string> = { PENDING: "Pending", SENT: "Sent", GAVE_UP: "Given up" };
