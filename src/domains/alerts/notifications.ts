import type { Db } from "../../db/index.ts";
import type { Logger } from "../../log/logger.ts";
import { Listeners } from "../../util/listeners.ts";
import type { AlertNotification } from "./schemas.ts";

export type { AlertNotification } from "./schemas.ts";

/** Built-in alerts raised by topic changes (SPEC, alert identifiers). */
export const TOPIC_ALERTS = {
  TOPIC_CREATED: { id: 4000, summary: "Topic has been created" },
  TOPIC_DELETED: { id: 4001, summary: "Topic has been deleted" },
  TOPIC_DATA_DELETED: { id: 4002, summary: "Topic data has been deleted" },
} as const;

export interface RaiseNotification {
  alertId: number;
  cluster: string;
  summary: string;
  severity?: "INFO" | "LOW" | "MEDIUM" | "HIGH" | "CRITICAL";
  category: string;
  /** What the alert is about: a topic name, a group. */
  instance: string;
  /** Who or what caused it (a user name, "loupe"). */
  source: string;
  docs?: string;
}

/** ISO 8601 with the local offset, as the SPEC shows ("timestamp with offset"). */
function isoWithOffset(ms: number): string {
  return new Date(ms).toISOString().replace("Z", "+00:00");
}

/**
 * Stores alert notifications (SQLite) and tells subscribers. Delivery to the alert stream
 * and to Alertmanager subscribes here.
 */
export class NotificationService {
  private readonly listeners: Listeners<AlertNotification>;

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
  ) {
    this.listeners = new Listeners(log, "notification");
  }

  async raise(n: RaiseNotification): Promise<AlertNotification> {
    const startsAt = Date.now();
    const labels = { severity: n.severity ?? "INFO", category: n.category, instance: n.instance, cluster: n.cluster };
    const annotations = { summary: n.summary, source: n.source, docs: n.docs ?? "" };
    const id = crypto.randomUUID();
    const generatorURL = `loupe://alerts/${n.alertId}/${id}`;
    const out: AlertNotification = {
      alertId: n.alertId,
      labels,
      annotations,
      startsAt: isoWithOffset(startsAt),
      endsAt: null,
      generatorURL,
    };
    try {
      await this.db
        .insertInto("alert_notifications")
        .values({
          alert_id: n.alertId,
          cluster: n.cluster,
          labels: JSON.stringify(labels),
          annotations: JSON.stringify(annotations),
          starts_at: startsAt,
          ends_at: null,
          generator_url: generatorURL,
        })
        .execute();
    } catch (e) {
      this.log.error("alert notification could not be stored", { alertId: n.alertId }, e);
    }
    this.listeners.emit(out);
    return out;
  }

  /** Newest first. */
  async list(opts: { limit: number; alertId?: number; cluster?: string }): Promise<AlertNotification[]> {
    let q = this.db.selectFrom("alert_notifications").selectAll().orderBy("starts_at", "desc").orderBy("id", "desc").limit(opts.limit);
    if (opts.alertId !== undefined) q = q.where("alert_id", "=", opts.alertId);
    if (opts.cluster !== undefined) q = q.where("cluster", "=", opts.cluster);
    const rows = await q.execute();
    return rows.map((r) => ({
      alertId: r.alert_id,
      labels: JSON.parse(r.labels) as Record<string, string>,
      annotations: JSON.parse(r.annotations) as Record<string, string>,
      startsAt: isoWithOffset(r.starts_at),
      endsAt: r.ends_at === null ? null : isoWithOffset(r.ends_at),
      generatorURL: r.generator_url,
    }));
  }

  subscribe(listener: (event: AlertNotification) => void): () => void {
    return this.listeners.subscribe(listener);
  }
}
