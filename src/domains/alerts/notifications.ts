import { type Selectable, sql, type Transaction } from "kysely";
import { jsonMember } from "../../db/dialect.ts";
import type { Db } from "../../db/index.ts";
import type { Database } from "../../db/types.ts";
import type { Logger } from "../../log/logger.ts";
import { Listeners } from "../../util/listeners.ts";
import { alertDefinition, type Severity } from "./catalogue.ts";
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
  severity?: Severity;
  category: string;
  /** What the alert is about: a topic name, a group. */
  instance: string;
  /** Who or what caused it (a user name, "loupe"). */
  source: string;
  docs?: string;
  /** More labels (the condition's id); they are part of the alert's identity in Alertmanager. */
  labels?: Record<string, string>;
  /** A condition that holds: at most one active notification per fingerprint, until resolved. */
  fingerprint?: string;
  /** Epoch ms; now when absent. */
  startsAt?: number;
  /** Epoch ms: raised already resolved (an outside system telling the end of an alert). */
  endsAt?: number;
}

/** Where a notification is delivered: the channels (outbox rows) it gets. */
export interface DeliveryRouting {
  channelsFor(alertId: number): string[];
  /** Told after a commit that queued deliveries, so they go out now rather than at the next poll. */
  queued(): void;
}

/** Which settings are enabled: a disabled one raises nothing. */
export interface SettingStates {
  enabled(cluster: string, alertId: number): Promise<boolean>;
}

/** ISO 8601 with the local offset, as the SPEC shows ("timestamp with offset"). */
function isoWithOffset(ms: number): string {
  return new Date(ms).toISOString().replace("Z", "+00:00");
}

type Row = Selectable<Database["alert_notifications"]>;

export interface NotificationFilter {
  limit: number;
  /** One notification: the id of its generatorURL. */
  id?: string;
  offset?: number;
  alertId?: number;
  category?: string;
  cluster?: string;
  state?: "active" | "resolved";
  /** Epoch ms: started at or after. */
  from?: number;
  /** Epoch ms: started before. */
  to?: number;
}

/**
 * Stores alert notifications (SQLite), queues their deliveries in the same transaction (the
 * outbox: src/domains/alerts/outbox.ts) and tells subscribers (the alert stream).
 */
export class NotificationService {
  private readonly listeners: Listeners<AlertNotification>;
  readonly #externalUrl: string;
  #routing: DeliveryRouting | undefined;
  #settings: SettingStates | undefined;

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
    opts: { externalUrl?: string; now?: () => number } = {},
  ) {
    this.listeners = new Listeners(log, "notification");
    this.#externalUrl = opts.externalUrl ?? "http://127.0.0.1:9991";
    this.now = opts.now ?? Date.now;
  }

  readonly now: () => number;

  /** Set once by the composition root: the channels and the settings' states. */
  attach(routing: DeliveryRouting, settings: SettingStates): void {
    this.#routing = routing;
    this.#settings = settings;
  }

  /**
   * Raises a notification, unless its setting is disabled on the cluster (then undefined). With a
   * fingerprint, the active notification of that fingerprint is returned instead of a new one.
   */
  async raise(n: RaiseNotification): Promise<AlertNotification | undefined> {
    if (this.#settings && alertDefinition(n.alertId) && !(await this.#settings.enabled(n.cluster, n.alertId))) return undefined;
    const def = alertDefinition(n.alertId);
    const startsAt = n.startsAt ?? this.now();
    const labels: Record<string, string> = {
      alertname: def?.name ?? `Alert${n.alertId}`,
      severity: n.severity ?? def?.severity ?? "INFO",
      category: n.category,
      instance: n.instance,
      ...n.labels,
      // Last: who may see it is decided by its cluster, which no extra label may change.
      cluster: n.cluster,
    };
    const annotations = { summary: n.summary, source: n.source, docs: n.docs ?? def?.docs ?? "" };
    const uid = crypto.randomUUID();
    const row = {
      alert_id: n.alertId,
      cluster: n.cluster,
      labels: JSON.stringify(labels),
      annotations: JSON.stringify(annotations),
      starts_at: startsAt,
      ends_at: n.endsAt ?? null,
      generator_url: `${this.#externalUrl}/alerts?id=${uid}`,
      uid,
      fingerprint: n.fingerprint ?? null,
    };
    try {
      const stored = await this.db.transaction().execute(async (trx) => {
        if (n.fingerprint) {
          const active = await activeOf(trx, n.fingerprint);
          if (active) return { row: active, fresh: false };
        }
        const { id } = await trx.insertInto("alert_notifications").values(row).returning("id").executeTakeFirstOrThrow();
        await this.#queue(trx, id, n.alertId);
        return { row: { ...row, id }, fresh: true };
      });
      const out = toNotification(stored.row);
      if (stored.fresh) {
        this.#routing?.queued();
        this.listeners.emit(out);
      }
      return out;
    } catch (e) {
      // Raised at the same moment by another call (the active fingerprint's unique index): that one stands.
      const active =
        n.fingerprint && /UNIQUE/i.test(String(e))
          ? await this.db.transaction().execute((trx) => activeOf(trx, n.fingerprint!))
          : undefined;
      if (active) return toNotification(active);
      this.log.error("alert notification could not be stored", { alertId: n.alertId }, e);
      const out = toNotification({ ...row, id: 0 });
      this.listeners.emit(out);
      return out;
    }
  }

  /** Ends the active notification of a fingerprint (its resolution is delivered); undefined when none is active. */
  async resolve(fingerprint: string, at = this.now()): Promise<AlertNotification | undefined> {
    const resolved = await this.db.transaction().execute(async (trx) => {
      const active = await activeOf(trx, fingerprint);
      if (!active) return undefined;
      await trx.updateTable("alert_notifications").set({ ends_at: at }).where("id", "=", active.id).execute();
      await this.#queue(trx, active.id, active.alert_id);
      return { ...active, ends_at: at };
    });
    if (!resolved) return undefined;
    this.#routing?.queued();
    const out = toNotification(resolved);
    this.listeners.emit(out);
    return out;
  }

  /** The fingerprints of the active notifications starting with `prefix`. */
  async activeFingerprints(prefix: string): Promise<string[]> {
    const rows = await this.db
      .selectFrom("alert_notifications")
      .select("fingerprint")
      .where("ends_at", "is", null)
      // ESCAPE names the escape character: SQLite has none by default, so `_` in a cluster name
      // stayed a wildcard after its backslash and matched nothing.
      .where(sql<boolean>`fingerprint like ${`${prefix.replace(/[%_\\]/g, "\\$&")}%`} escape '\\'`)
      .execute();
    return rows.map((r) => r.fingerprint!).filter((f) => f.startsWith(prefix));
  }

  /** A row per channel, pending; or the next version of an existing row (a resolution). */
  async #queue(trx: Transaction<Database>, id: number, alertId: number): Promise<void> {
    const channels = this.#routing?.channelsFor(alertId) ?? [];
    const now = this.now();
    for (const channel of channels) {
      await trx
        .insertInto("alert_deliveries")
        .values({ notification_id: id, channel, version: 1, next_attempt_at: now, first_pending_at: now })
        .onConflict((oc) =>
          oc.columns(["notification_id", "channel"]).doUpdateSet((eb) => ({
            version: eb("alert_deliveries.version", "+", 1),
            next_attempt_at: now,
            attempts: 0,
            first_pending_at: now,
          })),
        )
        .execute();
    }
  }

  /** Newest first. */
  async list(opts: NotificationFilter): Promise<AlertNotification[]> {
    let q = this.db.selectFrom("alert_notifications").selectAll().orderBy("starts_at", "desc").orderBy("id", "desc").limit(opts.limit);
    if (opts.offset) q = q.offset(opts.offset);
    if (opts.id !== undefined) q = q.where("uid", "=", opts.id);
    if (opts.alertId !== undefined) q = q.where("alert_id", "=", opts.alertId);
    if (opts.cluster !== undefined) q = q.where("cluster", "=", opts.cluster);
    if (opts.state === "active") q = q.where("ends_at", "is", null);
    if (opts.state === "resolved") q = q.where("ends_at", "is not", null);
    if (opts.from !== undefined) q = q.where("starts_at", ">=", opts.from);
    if (opts.to !== undefined) q = q.where("starts_at", "<", opts.to);
    if (opts.category !== undefined) q = q.where(jsonMember(this.db, "labels", "category"), "=", opts.category);
    return (await q.execute()).map(toNotification);
  }

  subscribe(listener: (event: AlertNotification) => void): () => void {
    return this.listeners.subscribe(listener);
  }

  /** Hands each notification streamed here to `relay` too: the other instances sharing the store. */
  relayTo(relay: (event: AlertNotification) => void): void {
    this.listeners.relayTo(relay);
  }

  /** A notification another instance streamed: to this instance's subscribers. */
  receive(notification: AlertNotification): void {
    this.listeners.deliver(notification);
  }
}

async function activeOf(trx: Transaction<Database>, fingerprint: string): Promise<Row | undefined> {
  return trx
    .selectFrom("alert_notifications")
    .selectAll()
    .where("fingerprint", "=", fingerprint)
    .where("ends_at", "is", null)
    .executeTakeFirst();
}

export function toNotification(r: Row): AlertNotification {
  return {
    alertId: r.alert_id,
    labels: JSON.parse(r.labels) as Record<string, string>,
    annotations: JSON.parse(r.annotations) as Record<string, string>,
    startsAt: isoWithOffset(r.starts_at),
    endsAt: r.ends_at === null ? null : isoWithOffset(r.ends_at),
    generatorURL: r.generator_url,
    id: r.uid,
  };
}
