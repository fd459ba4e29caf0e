/**
 * Delivery of alert notifications through an outbox in the store (table `alert_deliveries`,
 * migration 0011): each notification gets a row per channel in the transaction that stores it
 * (or resolves it), and this sender works the rows off. A row is marked sent only after the
 * channel answered 2xx, and only for the version it was sent, so:
 *
 * - a channel that is down keeps its rows pending, retried with a doubling backoff up to
 *   `maxBackoff`, and gets them when it answers again (after `giveUpAfter` a row is GAVE_UP);
 * - a restart (even SIGKILL) loses nothing raised: pending rows are read again from the store;
 * - nothing acknowledged is sent again. A crash between the channel's 2xx and the mark sends
 *   that one again (at least once): Alertmanager takes it as the same alert (same labels), and
 *   a webhook gets the same `X-Loupe-Delivery` id to drop it by.
 *
 * Alertmanager forgets an alert that is not sent again (its resolve_timeout), so a condition
 * Loupe evaluates is queued again for each Alertmanager every `resendInterval` while it holds;
 * an event (a topic created) or an alert an outside system POSTed is sent once (and its
 * resolution, when one comes), and Alertmanager lets it expire.
 * A webhook gets the raise and the resolution, once each.
 */
import { createHmac } from "node:crypto";
import { type Selectable, sql } from "kysely";
import type { Db } from "../../db/index.ts";
import type { Database } from "../../db/types.ts";
import type { Logger } from "../../log/logger.ts";
import { withoutUserInfo } from "../../proxy/upstream.ts";
import type { DeliveryRouting } from "./notifications.ts";
import { type AlertNotification, toNotification } from "./notifications.ts";
import type { Delivery } from "./schemas.ts";

export interface WebhookChannel {
  name: string;
  url: string;
  secret?: string;
  /** Setting ids it gets; all when absent. */
  alerts?: readonly number[];
}

export interface OutboxOptions {
  alertmanagers: readonly string[];
  webhooks: readonly WebhookChannel[];
  resendIntervalMs: number;
  timeoutMs: number;
  initialBackoffMs: number;
  maxBackoffMs: number;
  giveUpAfterMs: number;
  /** How often due rows are looked for when nothing was queued meanwhile. */
  pollMs?: number;
  now?: () => number;
}

/** Rows taken per pass. */
const BATCH = 200;

/** Settled deliveries (sent, given up) are kept this long for the API, then removed. */
export const SETTLED_KEPT_MS = 30 * 86_400_000;
const PRUNE_EVERY_MS = 3_600_000;

/** A due delivery row with its notification's columns (the store's row type, less its id). */
interface Due extends Omit<Selectable<Database["alert_notifications"]>, "id"> {
  notification_id: number;
  channel: string;
  version: number;
  attempts: number;
  first_pending_at: number;
}

export class AlertOutbox implements DeliveryRouting {
  readonly #db: Db;
  readonly #log: Logger;
  readonly #o: OutboxOptions;
  readonly #now: () => number;
  #timer: ReturnType<typeof setTimeout> | null = null;
  #running: Promise<void> | null = null;
  #again = false;
  #stopped = true;
  /** Whether this instance sends (one of several sharing the store does). */
  #elected: () => Promise<boolean> = async () => true;

  constructor(db: Db, log: Logger, opts: OutboxOptions) {
    this.#db = db;
    this.#log = log;
    this.#o = opts;
    this.#now = opts.now ?? Date.now;
  }

  channelsFor(alertId: number): string[] {
    return [
      ...this.#o.alertmanagers.map((url) => `alertmanager:${url}`),
      ...this.#o.webhooks.filter((w) => !w.alerts || w.alerts.includes(alertId)).map((w) => `webhook:${w.name}`),
    ];
  }

  queued(): void {
    if (this.#stopped) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#schedule(0);
  }

  /** A background job: polls for due rows until stopped. */
  start(runs: { ran(): void; failed(e: unknown): void }, elected?: () => Promise<boolean>): void {
    if (elected) this.#elected = elected;
    this.#stopped = false;
    this.#runs = runs;
    this.#schedule(0);
  }

  #runs: { ran(): void; failed(e: unknown): void } | undefined;
  #prunedAt = Number.NEGATIVE_INFINITY;

  /**
   * Removes the deliveries settled (sent or given up) more than SETTLED_KEPT_MS ago, so the
   * outbox does not grow without end; a pending one, or one of a condition still held (re-sent),
   * stays. Answers how many went.
   */
  async prune(): Promise<number> {
    const before = this.#now() - SETTLED_KEPT_MS;
    const res = await sql`
      DELETE FROM alert_deliveries
      WHERE (version = sent_version AND sent_at < ${before})
         OR (given_up_version = version AND version > sent_version AND next_attempt_at < ${before})`.execute(this.#db);
    return Number(res.numAffectedRows ?? 0);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    await this.#running;
  }

  #schedule(ms: number): void {
    if (this.#stopped) return;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.#running = this.pass()
        .then(
          () => this.#runs?.ran(),
          (e) => this.#runs?.failed(e),
        )
        .finally(() => {
          this.#running = null;
          const again = this.#again;
          this.#again = false;
          this.#schedule(again ? 0 : (this.#o.pollMs ?? 1_000));
        });
    }, ms);
    this.#timer.unref?.();
  }

  /** One pass: queue the re-sends that are due, then send what is due. Public for tests. */
  async pass(): Promise<void> {
    if (!(await this.#elected())) return;
    if (this.#now() - this.#prunedAt >= PRUNE_EVERY_MS) {
      this.#prunedAt = this.#now();
      await this.prune();
    }
    await this.#queueResends();
    for (;;) {
      const due = await this.#due();
      if (due.length === 0) return;
      await Promise.all([...groupBy(due, (d) => d.channel)].map(([channel, rows]) => this.#send(channel, rows)));
      if (due.length < BATCH) return;
    }
  }

  async #queueResends(): Promise<void> {
    if (this.#o.alertmanagers.length === 0) return;
    const now = this.#now();
    await sql`
      UPDATE alert_deliveries SET version = version + 1, next_attempt_at = ${now}, attempts = 0, first_pending_at = ${now}
      WHERE channel LIKE 'alertmanager:%' AND version = sent_version AND sent_at < ${now - this.#o.resendIntervalMs}
        AND notification_id IN (SELECT id FROM alert_notifications WHERE ends_at IS NULL AND fingerprint LIKE 'cond/%')`.execute(this.#db);
  }

  async #due(): Promise<Due[]> {
    const now = this.#now();
    const known = this.#known();
    const rows = await this.#db
      .selectFrom("alert_deliveries as d")
      .innerJoin("alert_notifications as n", "n.id", "d.notification_id")
      .select([
        "d.notification_id",
        "d.channel",
        "d.version",
        "d.attempts",
        "d.first_pending_at",
        "n.alert_id",
        "n.cluster",
        "n.labels",
        "n.annotations",
        "n.starts_at",
        "n.ends_at",
        "n.generator_url",
        "n.uid",
        "n.fingerprint",
      ])
      .where(sql<boolean>`d.version > d.sent_version`)
      .where(sql<boolean>`(d.given_up_version IS NULL OR d.given_up_version < d.version)`)
      .where("d.next_attempt_at", "<=", now)
      .where("d.channel", "in", known.length > 0 ? known : ["-"])
      .orderBy("d.next_attempt_at")
      .limit(BATCH)
      .execute();
    return rows as Due[];
  }

  /** Channels configured now: rows of a channel removed from the config wait (shown as PENDING). */
  #known(): string[] {
    return [...this.#o.alertmanagers.map((u) => `alertmanager:${u}`), ...this.#o.webhooks.map((w) => `webhook:${w.name}`)];
  }

  async #send(channel: string, rows: Due[]): Promise<void> {
    const [kind, target] = splitChannel(channel);
    if (kind === "alertmanager") {
      const body = JSON.stringify(rows.map((r) => amAlert(r, this.#now(), this.#o.resendIntervalMs)));
      const error = await this.#post(`${target}/api/v2/alerts`, body, {});
      await Promise.all(rows.map((r) => this.#settle(r, error)));
      return;
    }
    const hook = this.#o.webhooks.find((w) => w.name === target);
    if (!hook) return;
    for (const r of rows) {
      const body = JSON.stringify(webhookBody(r));
      const headers: Record<string, string> = { "x-loupe-delivery": `${r.uid}:${r.ends_at === null ? "firing" : "resolved"}` };
      if (hook.secret) headers["x-loupe-signature"] = `sha256=${createHmac("sha256", hook.secret).update(body).digest("hex")}`;
      await this.#settle(r, await this.#post(hook.url, body, headers));
    }
  }

  /** Undefined on a 2xx, else what went wrong (without credentials). */
  async #post(url: string, body: string, headers: Record<string, string>): Promise<string | undefined> {
    try {
      const res = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body,
        signal: AbortSignal.timeout(this.#o.timeoutMs),
        redirect: "manual",
      });
      const text = await res.text().catch(() => "");
      if (res.status >= 200 && res.status < 300) return undefined;
      return `HTTP ${res.status}${text ? `: ${text.slice(0, 200)}` : ""}`;
    } catch (e) {
      return withoutUserInfo(e instanceof Error ? e.message : String(e));
    }
  }

  async #settle(r: Due, error: string | undefined): Promise<void> {
    const now = this.#now();
    if (error === undefined) {
      await this.#db
        .updateTable("alert_deliveries")
        .set({ sent_version: r.version, sent_at: now, attempts: 0, last_error: null })
        .where("notification_id", "=", r.notification_id)
        .where("channel", "=", r.channel)
        .where("sent_version", "<", r.version)
        .execute();
      return;
    }
    const attempts = r.attempts + 1;
    const backoff = Math.min(this.#o.maxBackoffMs, this.#o.initialBackoffMs * 2 ** Math.min(attempts - 1, 30));
    const givesUp = now - r.first_pending_at >= this.#o.giveUpAfterMs;
    if (attempts === 1 || givesUp) this.#log.warn("an alert delivery failed", { channel: withoutUserInfo(r.channel), error, givesUp });
    await this.#db
      .updateTable("alert_deliveries")
      .set({ attempts, next_attempt_at: now + backoff, last_error: error, ...(givesUp ? { given_up_version: r.version } : {}) })
      .where("notification_id", "=", r.notification_id)
      .where("channel", "=", r.channel)
      .where("version", "=", r.version)
      .execute();
  }

  /**
   * The Alertmanagers whose deliveries fail: a pending row tried at least `minAttempts` times,
   * not given up. Alert 1004 is raised from this.
   */
  async failingAlertmanagers(minAttempts: number): Promise<{ url: string; attempts: number; lastError: string | null }[]> {
    const rows = await this.#db
      .selectFrom("alert_deliveries")
      .select([
        "channel",
        (eb) => eb.fn.max<number>("attempts").as("attempts"),
        (eb) => eb.fn.max<string | null>("last_error").as("last_error"),
      ])
      .where("channel", "like", "alertmanager:%")
      .where(sql<boolean>`version > sent_version AND (given_up_version IS NULL OR given_up_version < version)`)
      .where("attempts", ">=", minAttempts)
      .groupBy("channel")
      .execute();
    const known = new Set(this.#o.alertmanagers);
    return rows
      .map((r) => ({ url: splitChannel(r.channel)[1], attempts: r.attempts, lastError: r.last_error }))
      .filter((r) => known.has(r.url));
  }

  /** The outbox as the API shows it: newest notifications first. */
  async deliveries(opts: { limit: number; state?: Delivery["state"]; notification?: string }): Promise<Delivery[]> {
    let q = this.#db
      .selectFrom("alert_deliveries as d")
      .innerJoin("alert_notifications as n", "n.id", "d.notification_id")
      .select([
        "n.uid",
        "n.alert_id",
        "d.channel",
        "d.version",
        "d.sent_version",
        "d.given_up_version",
        "d.attempts",
        "d.last_error",
        "d.next_attempt_at",
        "d.sent_at",
      ])
      .orderBy("d.notification_id", "desc")
      .limit(opts.limit);
    if (opts.notification !== undefined) q = q.where("n.uid", "=", opts.notification);
    if (opts.state === "SENT") q = q.where(sql<boolean>`d.version = d.sent_version`);
    if (opts.state === "GAVE_UP") q = q.where(sql<boolean>`d.version > d.sent_version AND d.given_up_version = d.version`);
    if (opts.state === "PENDING")
      q = q.where(sql<boolean>`d.version > d.sent_version AND (d.given_up_version IS NULL OR d.given_up_version < d.version)`);
    return (await q.execute()).map((r) => {
      const state: Delivery["state"] = r.version === r.sent_version ? "SENT" : r.given_up_version === r.version ? "GAVE_UP" : "PENDING";
      return {
        notification: r.uid,
        alertId: r.alert_id,
        channel: withoutUserInfo(r.channel),
        state,
        attempts: r.attempts,
        lastError: r.last_error,
        nextAttemptAt: state === "PENDING" ? r.next_attempt_at : null,
        sentAt: r.sent_at,
      };
    });
  }
}

function splitChannel(channel: string): [string, string] {
  const i = channel.indexOf(":");
  return [channel.slice(0, i), channel.slice(i + 1)];
}

function groupBy<T>(items: T[], key: (t: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const it of items) {
    const k = key(it);
    const list = out.get(k);
    if (list) list.push(it);
    else out.set(k, [it]);
  }
  return out;
}

/** A condition Loupe evaluates (not an event, nor an alert an outside system raised): re-sent while it holds. */
const held = (r: { fingerprint: string | null }) => r.fingerprint?.startsWith("cond/") === true;

const nonEmpty = (m: Record<string, string>) => Object.fromEntries(Object.entries(m).filter(([, v]) => v !== ""));

/**
 * One alert of Alertmanager's v2 API (`POST /api/v2/alerts`). Its identity there is its labels,
 * so a resend (or a send again after a crash) is the same alert. A condition that still holds
 * is sent with `endsAt` four re-send intervals ahead, as Prometheus does: if Loupe stops sending,
 * Alertmanager resolves it by itself; a resolved one carries its real end.
 */
function amAlert(r: Due, now: number, resendMs: number): Record<string, unknown> {
  const n = toNotification({ ...r, id: r.notification_id });
  const endsAt = r.ends_at !== null ? new Date(r.ends_at).toISOString() : held(r) ? new Date(now + 4 * resendMs).toISOString() : undefined;
  return {
    labels: nonEmpty(n.labels),
    annotations: nonEmpty(n.annotations),
    startsAt: new Date(r.starts_at).toISOString(),
    ...(endsAt ? { endsAt } : {}),
    generatorURL: n.generatorURL,
  };
}

/** A webhook's body: the notification and whether it fires or is resolved. */
function webhookBody(r: Due): { status: "firing" | "resolved"; notification: AlertNotification } {
  return { status: r.ends_at === null ? "firing" : "resolved", notification: toNotification({ ...r, id: r.notification_id }) };
}
