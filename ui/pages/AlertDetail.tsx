/**
 * One notification, where its generatorURL opens (`/alerts?id=<id>`): what it says, its labels
 * and annotations, when it was raised and resolved (live: a resolution shows as it comes), the
 * pages it concerns, and its delivery to each channel (Alertmanagers, webhooks).
 */
import { useState } from "react";
import { type AlertNotification, useAlertSettings, useDeliveries, useNotification } from "../api/alerts.ts";
import { withCluster } from "../cluster.ts";
import { ErrorAlert, Link, TableHead } from "../components.tsx";
import { Concerns, DeliveryTable, LiveStatus, lasted, latest, SeverityTag, StateTag, titleOf, useAlertFeed, when } from "./AlertParts.tsx";

export function AlertDetail({ id, cluster, canRead }: { id: string; cluster: string | null; canRead: boolean }) {
  const one = useNotification(id);
  const [streamed, setStreamed] = useState<AlertNotification | undefined>(undefined);
  const feed = useAlertFeed((n) => {
    if (n.id === id) setStreamed(n);
  });
  const n = one.data ? latest(one.data, streamed) : null;
  const back = (
    <p className="alert-back">
      <Link to={withCluster("/alerts", cluster)}>All notifications</Link>
    </p>
  );
  if (one.isPending || one.error || !n)
    return (
      <section className="page alerts">
        {back}
        <h1>{one.data === null ? "Notification not found" : "Notification"}</h1>
        <ErrorAlert error={one.error} />
        {one.isPending && <p className="muted">Loading the notification…</p>}
        {one.data === null && (
          <p className="muted">
            No notification has the id {id}: the link may be mistyped, the notification may have ended long enough ago to be removed
            (alerts.retention), or it concerns a topic you may not see.
          </p>
        )}
      </section>
    );
  return (
    <section className="page alerts alert-detail">
      {back}
      <div className="alert-heading">
        <h1>{titleOf(n)}</h1>
        <StateTag n={n} />
        <LiveStatus feed={feed} />
      </div>
      <Facts n={n} cluster={cluster} />
      <div className="alert-pairs">
        <Pairs title="Labels" values={n.labels} />
        <Pairs title="Annotations" values={n.annotations} />
      </div>
      <h2>Delivery</h2>
      {canRead ? <NotificationDeliveries id={n.id} /> : <p className="muted">The delivery state of notifications needs the read role.</p>}
    </section>
  );
}

function Facts({ n, cluster }: { n: AlertNotification; cluster: string | null }) {
  const settings = useAlertSettings(cluster);
  const setting = Object.values(settings.data?.categories ?? {})
    .flat()
    .find((s) => s.id === n.alertId);
  return (
    <dl className="alert-facts">
      <dt>Alert</dt>
      <dd>
        {n.alertId} · {n.labels.alertname}
        {setting && <span className="muted"> ({setting.description})</span>}
      </dd>
      <dt>Severity</dt>
      <dd>
        <SeverityTag severity={n.labels.severity} />
      </dd>
      <dt>Raised</dt>
      <dd>{when(n.startsAt)}</dd>
      <dt>Resolved</dt>
      <dd>{n.endsAt === null ? <span className="muted">not yet</span> : when(n.endsAt)}</dd>
      <dt>{n.endsAt === null ? "Active for" : "Lasted"}</dt>
      <dd>{lasted(n)}</dd>
      <dt>Concerns</dt>
      <dd className="alert-instance">
        <Concerns n={n} />
      </dd>
      <dt>Cluster</dt>
      <dd>{n.labels.cluster ?? "—"}</dd>
      <dt>Source</dt>
      <dd>{n.annotations.source || "—"}</dd>
      <dt>Link</dt>
      <dd className="alert-url">{n.generatorURL}</dd>
    </dl>
  );
}

function Pairs({ title, values }: { title: string; values: Record<string, string> }) {
  const entries = Object.entries(values);
  return (
    <div className="alerts-table-scroll">
      <table className="alerts-table">
        <caption>{title}</caption>
        <TableHead columns={["Name", "Value"]} />
        <tbody>
          {entries.map(([k, v]) => (
            <tr key={k}>
              <th scope="row">{k}</th>
              <td className="alert-value">{v === "" ? <span className="muted">(empty)</span> : v}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** Its delivery to each channel, read again every few seconds while the outbox retries. */
function NotificationDeliveries({ id }: { id: string }) {
  const rows = useDeliveries({ notification: id, limit: 100 });
  return (
    <>
      <ErrorAlert error={rows.error} />
      {rows.data && rows.data.length === 0 && (
        <p className="muted">
          Not delivered anywhere: no Alertmanager or webhook is configured for this alert (alerts.alertmanagers, alerts.webhooks).
        </p>
      )}
      {rows.data && rows.data.length > 0 && <DeliveryTable rows={rows.data} label="Deliveries of this notification" />}
    </>
  );
}
