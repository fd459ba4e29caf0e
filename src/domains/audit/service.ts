import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { sql } from "kysely";
import { isStoreFull } from "../../db/dialect.ts";
import type { Db } from "../../db/index.ts";
import { AppError } from "../../errors.ts";
import type { Logger } from "../../log/logger.ts";
import { JsonDepthError, parseJson } from "../../util/json.ts";
import { appendLinesSynced } from "../../util/json-lines.ts";
import { Listeners } from "../../util/listeners.ts";
import type { AuditChange, AuditEntry, AuditOutcome, AuditRecord, AuditResult, AuditType } from "./types.ts";

export interface AuditQuery {
  type?: string;
  user?: string;
  from?: number;
  to?: number;
  limit: number;
}

/**
 * Keys whose values never reach an audit entry: passwords, tokens, JAAS configs and the like,
 * also as the last word of a camelCase key (`currentPassword`).
 */
const SECRET_KEY =
  /(^|[._-])(password|passwd|secret|token|credentials?)$|[a-z](Password|Passwd|Secret|Token|Credentials?)$|sasl\.jaas\.config|^authorization$|api[._-]?key/i;

export function isSecretKey(key: string): boolean {
  return SECRET_KEY.test(key);
}

/** Flattens content to strings and masks secrets, also inside nested objects and JSON text. */
export function sanitizeContent(content: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(content)) {
    if (value === undefined) continue;
    if (isSecretKey(key)) {
      out[key] = "********";
      continue;
    }
    out[key] = typeof value === "string" ? maskInText(value) : JSON.stringify(maskDeep(value));
  }
  return out;
}

function maskDeep(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(maskDeep);
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = isSecretKey(k) ? "********" : maskDeep(v);
    return out;
  }
  return value;
}

/**
 * A string may itself be JSON (a connector config, say): mask secrets inside it too. JSON text
 * nested past MAX_JSON_DEPTH is not walked (maskDeep recurses) and not kept either: it could
 * hold a secret.
 */
function maskInText(text: string): string {
  const t = text.trimStart();
  if (t.startsWith("{") || t.startsWith("[")) {
    try {
      return JSON.stringify(maskDeep(parseJson(text)));
    } catch (e) {
      if (e instanceof JsonDepthError) return `(JSON text of ${text.length} characters nested deeper than ${e.maxDepth} levels: not kept)`;
      /* not JSON: keep as is */
    }
  }
  return text;
}

/** The reason an entry left PENDING by a crash is closed with at the next start. */
export const UNKNOWN_REASON = "outcome unknown: Loupe stopped before the result of the change was recorded";

/** An entry's content closed as UNKNOWN: its keys as they were, then the outcome and why. */
function withUnknownOutcome(content: string): string {
  let kept: Record<string, unknown> = {};
  try {
    const v: unknown = JSON.parse(content);
    if (v !== null && typeof v === "object" && !Array.isArray(v)) kept = v as Record<string, unknown>;
  } catch {
    // Not JSON (never written so): the outcome is what is left to say.
  }
  return JSON.stringify({ ...kept, outcome: "UNKNOWN", reason: UNKNOWN_REASON });
}

/** An audited change whose intent is stored; the caller completes it when the change ends. */
export interface PendingAudit {
  readonly id: number;
  /**
   * Stores the outcome and streams the completed entry. A failure to store is logged, never
   * thrown: the change is made by then, and its entry stays PENDING until the next start
   * closes it as UNKNOWN.
   */
  complete(result?: AuditResult): Promise<AuditEntry>;
}

function outcomeOf(failure: string | undefined): { outcome: AuditOutcome; reason?: string } {
  return failure === undefined ? { outcome: "SUCCESS" } : { outcome: "FAILURE", reason: failure };
}

/** Entries exported and removed per statement while pruning. */
const PRUNE_BATCH = 5_000;

export class AuditService {
  private readonly listeners: Listeners<AuditEntry>;

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {
    this.listeners = new Listeners(log, "audit");
  }

  /**
   * Stores the intent of a change (outcome PENDING) before the change is made, so no change is
   * acknowledged without an entry. Throws UNAVAILABLE when the intent cannot be stored: the
   * caller must then not make the change. The pending entry is not streamed; its completion is.
   */
  async begin(rec: Omit<AuditRecord, "failure"> & { request?: Record<string, unknown> }): Promise<PendingAudit> {
    const base = { ...(rec.content ?? {}) };
    const timestamp = this.now();
    const content = sanitizeContent({ ...base, ...(rec.request ?? {}), outcome: "PENDING" });
    let id: number;
    try {
      const row = await this.db
        .insertInto("audit")
        .values({
          type: rec.type,
          change: rec.change,
          user_id: rec.user,
          timestamp,
          content: JSON.stringify(content),
          success: 0,
          outcome: "PENDING",
        })
        .returning("id")
        .executeTakeFirstOrThrow();
      id = row.id;
    } catch (e) {
      this.log.error("audit intent could not be stored: the change is refused", { type: rec.type, change: rec.change }, e);
      const full = isStoreFull(e);
      throw new AppError(
        "UNAVAILABLE",
        `The audit log cannot be written${full ? " (the store is full)" : ""}, so the change was not made. Try again once the store can be written.`,
        { cause: e },
      );
    }
    return {
      id,
      complete: async (result = {}) => {
        // What the handler says it acted on replaces the raw request; without it (the request was
        // refused before the handler read it) the raw request tells what was attempted.
        const done = sanitizeContent({ ...base, ...(result.content ?? rec.request ?? {}), ...outcomeOf(result.failure) });
        const entry: AuditEntry = { type: rec.type, change: rec.change, userId: rec.user, timestamp, content: done };
        try {
          await this.db
            .updateTable("audit")
            .set({ content: JSON.stringify(done), outcome: done.outcome!, success: result.failure === undefined ? 1 : 0 })
            .where("id", "=", id)
            .execute();
        } catch (e) {
          this.log.error(
            "audit entry could not be completed: it stays PENDING until the next start marks it UNKNOWN",
            { id, type: rec.type, change: rec.change, outcome: done.outcome },
            e,
          );
        }
        this.listeners.emit(entry);
        return entry;
      },
    };
  }

  /**
   * Writes one finished entry at once: for what changes nothing (a denied request, a request
   * refused before any change). A failure to write is logged, never thrown at the caller's request.
   */
  async record(rec: AuditRecord): Promise<AuditEntry> {
    const content = sanitizeContent({ ...(rec.content ?? {}), ...outcomeOf(rec.failure) });
    const entry: AuditEntry = {
      type: rec.type,
      change: rec.change,
      userId: rec.user,
      timestamp: this.now(),
      content,
    };
    try {
      await this.db
        .insertInto("audit")
        .values({
          type: entry.type,
          change: entry.change,
          user_id: entry.userId,
          timestamp: entry.timestamp,
          content: JSON.stringify(content),
          success: rec.failure === undefined ? 1 : 0,
          outcome: content.outcome!,
        })
        .execute();
    } catch (e) {
      this.log.error("audit entry could not be stored", { type: entry.type, change: entry.change }, e);
    }
    this.listeners.emit(entry);
    return entry;
  }

  /**
   * Closes the entries a crash left PENDING as UNKNOWN. Run once when the store opens, before
   * any request: no change is under way then, so every PENDING entry is an interrupted one. On a
   * store other instances share, their changes may be under way: `startedBefore` closes only the
   * entries older than any change takes (see compose.ts), at each start and hourly after.
   * A store that cannot close them throws (after an error line): the caller reports the failure
   * and serves on; the next start tries again.
   */
  async closeInterrupted(opts: { startedBefore?: number } = {}): Promise<number> {
    try {
      // Few rows (the changes under way when Loupe stopped), each rewritten here: the same on every store.
      const n = await this.db.transaction().execute(async (trx) => {
        const open = await trx
          .selectFrom("audit")
          .select(["id", "content"])
          .where("outcome", "=", "PENDING")
          .$if(opts.startedBefore !== undefined, (q) => q.where("timestamp", "<", opts.startedBefore!))
          .execute();
        for (const r of open)
          await trx
            .updateTable("audit")
            .set({ outcome: "UNKNOWN", success: 0, content: withUnknownOutcome(r.content) })
            .where("id", "=", r.id)
            .where("outcome", "=", "PENDING")
            .execute();
        return open.length;
      });
      if (n > 0) this.log.warn("audit entries left open by an earlier stop are closed as outcome UNKNOWN", { entries: n });
      return n;
    } catch (e) {
      this.log.error("audit entries left open could not be closed; the next start tries again", {}, e);
      throw e;
    }
  }

  async list(q: AuditQuery): Promise<AuditEntry[]> {
    let query = this.db.selectFrom("audit").selectAll().orderBy("timestamp", "desc").orderBy("id", "desc").limit(q.limit);
    if (q.type) query = query.where("type", "=", q.type);
    if (q.user) query = query.where("user_id", "=", q.user);
    if (q.from !== undefined) query = query.where("timestamp", ">=", q.from);
    if (q.to !== undefined) query = query.where("timestamp", "<=", q.to);
    const rows = await query.execute();
    return rows.map((r) => ({
      type: r.type as AuditType,
      change: r.change as AuditChange,
      userId: r.user_id,
      timestamp: r.timestamp,
      content: JSON.parse(r.content) as Record<string, string>,
    }));
  }

  subscribe(listener: (event: AuditEntry) => void): () => void {
    return this.listeners.subscribe(listener);
  }

  /** Hands each entry streamed here to `relay` too: the other instances sharing the store. */
  relayTo(relay: (event: AuditEntry) => void): void {
    this.listeners.relayTo(relay);
  }

  /** An entry another instance streamed: to this instance's subscribers. */
  receive(entry: AuditEntry): void {
    this.listeners.deliver(entry);
  }

  /**
   * Removes entries past the retention age, beyond the retention count, and beyond the retention
   * size (bytes of content, the newest kept), oldest first. With `exportDir`, each removed entry is
   * first appended to `audit-pruned-<UTC date>.jsonl` there (synced before the rows go: a crash in
   * between exports them again at the next run, never loses them). The pruning is itself audited
   * (AUDIT_LOG REMOVE: how many, the time span, the file). An entry still PENDING is never removed.
   */
  async prune(opts: { maxAgeMs: number; maxEntries: number; maxBytes?: number; exportDir?: string; now?: number }): Promise<number> {
    const now = opts.now ?? Date.now();
    const cutoff = opts.maxAgeMs > 0 ? now - opts.maxAgeMs : Number.NEGATIVE_INFINITY;
    let boundary = 0;
    if (opts.maxEntries > 0) {
      const keep = await this.db.selectFrom("audit").select("id").orderBy("id", "desc").offset(opts.maxEntries).limit(1).executeTakeFirst();
      if (keep) boundary = Math.max(boundary, keep.id);
    }
    if ((opts.maxBytes ?? 0) > 0) {
      const over = await sql<{ id: number }>`SELECT id FROM (SELECT id, SUM(length(content)) OVER (ORDER BY id DESC) AS total
        FROM audit) AS sized WHERE total > ${opts.maxBytes} ORDER BY id DESC LIMIT 1`.execute(this.db);
      const id = over.rows[0]?.id;
      if (id !== undefined) boundary = Math.max(boundary, id);
    }
    if (boundary === 0 && cutoff === Number.NEGATIVE_INFINITY) return 0;
    const file = opts.exportDir ? join(opts.exportDir, `audit-pruned-${new Date(now).toISOString().slice(0, 10)}.jsonl`) : null;
    if (opts.exportDir) mkdirSync(opts.exportDir, { recursive: true, mode: 0o700 });
    let removed = 0;
    let first: number | undefined;
    let last: number | undefined;
    for (;;) {
      const batch = await this.db
        .selectFrom("audit")
        .select(["id", "type", "change", "user_id", "timestamp", "content"])
        .where((eb) => eb.or([eb("timestamp", "<", Number.isFinite(cutoff) ? cutoff : -1), eb("id", "<=", boundary)]))
        .where("outcome", "!=", "PENDING")
        .orderBy("id")
        .limit(PRUNE_BATCH)
        .execute();
      if (batch.length === 0) break;
      if (file) {
        const lines = batch.map((r) =>
          JSON.stringify({
            id: r.id,
            type: r.type,
            change: r.change,
            userId: r.user_id,
            timestamp: r.timestamp,
            content: JSON.parse(r.content),
          }),
        );
        appendLinesSynced(file, lines);
      }
      await this.db
        .deleteFrom("audit")
        .where(
          "id",
          "in",
          batch.map((r) => r.id),
        )
        .execute();
      removed += batch.length;
      for (const r of batch) {
        first = Math.min(first ?? r.timestamp, r.timestamp);
        last = Math.max(last ?? r.timestamp, r.timestamp);
      }
      if (batch.length < PRUNE_BATCH) break;
    }
    if (removed > 0)
      await this.record({
        type: "AUDIT_LOG",
        change: "REMOVE",
        user: "loupe",
        content: {
          reason: "retention",
          entries: removed,
          from: new Date(first!).toISOString(),
          to: new Date(last!).toISOString(),
          ...(file ? { export: file } : {}),
        },
      });
    return removed;
  }
}
