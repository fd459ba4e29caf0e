import type { Db } from "../../db/index.ts";
import type { Logger } from "../../log/logger.ts";
import { Listeners } from "../../util/listeners.ts";
import type { AuditChange, AuditEntry, AuditRecord, AuditType } from "./types.ts";

export interface AuditQuery {
  type?: string;
  user?: string;
  from?: number;
  to?: number;
  limit: number;
}

/** Keys whose values never reach an audit entry: passwords, tokens, JAAS configs and the like. */
const SECRET_KEY = /(^|[._-])(password|passwd|secret|token|credentials?)$|sasl\.jaas\.config|^authorization$|api[._-]?key/i;

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

/** A string may itself be JSON (a connector config, say): mask secrets inside it too. */
function maskInText(text: string): string {
  const t = text.trimStart();
  if (t.startsWith("{") || t.startsWith("[")) {
    try {
      return JSON.stringify(maskDeep(JSON.parse(text)));
    } catch {
      /* not JSON: keep as is */
    }
  }
  return text;
}

export class AuditService {
  private readonly listeners: Listeners<AuditEntry>;

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
  ) {
    this.listeners = new Listeners(log, "audit");
  }

  /** Writes one entry. A failure to write is logged, never thrown at the caller's request. */
  async record(rec: AuditRecord): Promise<AuditEntry> {
    const content = sanitizeContent({
      ...(rec.content ?? {}),
      ...(rec.failure !== undefined ? { outcome: "FAILURE", reason: rec.failure } : { outcome: "SUCCESS" }),
    });
    const entry: AuditEntry = {
      type: rec.type,
      change: rec.change,
      userId: rec.user,
      timestamp: Date.now(),
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
        })
        .execute();
    } catch (e) {
      this.log.error("audit entry could not be stored", { type: entry.type, change: entry.change }, e);
    }
    this.listeners.emit(entry);
    return entry;
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

  /** Removes entries past the retention age and beyond the retention count. */
  async prune(opts: { maxAgeMs: number; maxEntries: number; now?: number }): Promise<number> {
    let removed = 0;
    if (opts.maxAgeMs > 0) {
      const cutoff = (opts.now ?? Date.now()) - opts.maxAgeMs;
      const res = await this.db.deleteFrom("audit").where("timestamp", "<", cutoff).executeTakeFirst();
      removed += Number(res.numDeletedRows);
    }
    if (opts.maxEntries > 0) {
      const keep = await this.db.selectFrom("audit").select("id").orderBy("id", "desc").offset(opts.maxEntries).limit(1).executeTakeFirst();
      if (keep) {
        const res = await this.db.deleteFrom("audit").where("id", "<=", keep.id).executeTakeFirst();
        removed += Number(res.numDeletedRows);
      }
    }
    return removed;
  }
}
