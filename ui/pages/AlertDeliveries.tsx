/**
 * The outbox as an operator reads it: each channel (an Alertmanager, a webhook) with what it
 * acknowledged, what waits and what was given up among the latest notifications' deliveries;
 * then every delivery that is failing (retried, with its last error) or was given up.
 */
import { type Delivery, useDeliveries } from "../api/alerts.ts";
import { ErrorAlert, Link, num, TableHead } from "../components.tsx";
import { DeliveryTable, pathOf } from "./AlertParts.tsx";

/** Deliveries read for the channels' summary: those of the latest notifications. */
const RECENT = 500;

interface ChannelSummary {
  channel: string;
  sent: number;
  pending: number;
  gaveUp: number;
  lastSent: number | null;
  /** The error of its latest failing delivery. */
  failing: string | null;
}

function byChannel(rows: Delivery[]): ChannelSummary[] {
  const out = new Map<string, ChannelSummary>();
  for (const d of rows) {
    const c = out.get(d.channel) ?? { channel: d.channel, sent: 0, pending: 0, gaveUp: 0, lastSent: null, failing: null };
    if (d.state === "SENT") c.sent++;
    else if (d.state === "PENDING") c.pending++;
    else c.gaveUp++;
    if (d.sentAt !== null && (c.lastSent === null || d.sentAt > c.lastSent)) c.lastSent = d.sentAt;
    // Rows come newest notification first: the first error met is the latest.
    if (d.state !== "SENT" && d.lastError !== null) c.failing ??= d.lastError;
    out.set(d.channel, c);
  }
  return [...out.values()].sort((a, b) => a.channel.localeCompare(b.channel));
}

export function AlertDeliveriesView({ cluster }: { cluster: string | null }) {
  const recent = useDeliveries({ limit: RECENT });
  const pending = useDeliveries({ state: "PENDING", limit: RECENT });
  const gaveUp = useDeliveries({ state: "GAVE_UP", limit: 200 });
  const channels = byChannel(recent.data ?? []);
  const failing = [...(pending.data ?? []).filter((d) => d.lastError !== null), ...(gaveUp.data ?? [])];
  return (
    <>
      <p className="muted alerts-intro">
        Every notification is delivered to each configured Alertmanager and webhook through an outbox: a channel that does not answer gets
        what waited once it answers again (retried with a growing wait), and a delivery still failing after alerts.giveUpAfter is given up.
        Read again every 5 s.
      </p>
      <ErrorAlert error={recent.error ?? pending.error ?? gaveUp.error} />
      <h2>Channels</h2>
      {recent.isPending && <p className="muted">Loading the deliveries…</p>}
      {recent.data && channels.length === 0 && (
        <p className="muted">
          No delivery yet: no Alertmanager or webhook is configured (alerts.alertmanagers, alerts.webhooks), or nothing was raised.
        </p>
      )}
      {channels.length > 0 && (
        <div className="alerts-table-scroll">
          <table className="alerts-table" aria-label="Channels">
            <TableHead columns={["Channel", num("Sent"), num("Pending"), num("Given up"), "Last sent", "Latest error"]} />
            <tbody>
              {channels.map((c) => (
                <tr key={c.channel} className={c.failing || c.gaveUp > 0 ? "alert-row-active" : undefined}>
                  <th scope="row" className="alert-value">
                    {c.channel}
                  </th>
                  <td className="num">{c.sent}</td>
                  <td className="num">{c.pending}</td>
                  <td className="num">{c.gaveUp}</td>
                  <td>{c.lastSent === null ? "—" : new Date(c.lastSent).toLocaleString()}</td>
                  <td className="alert-value">{c.failing ?? <span className="muted">none</span>}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <p className="muted">Counted over the deliveries of the latest notifications (up to {RECENT} deliveries).</p>
      <h2>Failing and given up</h2>
      {pending.data && gaveUp.data && failing.length === 0 && (
        <p className="muted">Nothing is failing: every delivery was acknowledged or is on its way.</p>
      )}
      {failing.length > 0 && (
        <DeliveryTable
          rows={failing}
          label="Failing deliveries"
          notification={(d) => <Link to={pathOf(d.notification, cluster)}>{`${d.alertId} · ${d.notification.slice(0, 8)}`}</Link>}
        />
      )}
    </>
  );
}
