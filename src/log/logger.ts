/**
 * Structured logging: one JSON object per line on stdout (journald keeps it),
 * and the latest lines kept in memory for GET /api/logs/{INFO,METRICS}.
 */

export type Level = "debug" | "info" | "warn" | "error";
const LEVEL_RANK: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** The SPEC's log line shape. */
export interface LogLine {
  timestamp: number;
  logger: string;
  stacktrace: string;
  thread: string;
  message: string;
  time: string;
  level: string;
  /**
   * The line's structured fields (secrets redacted, each value cut at FIELD_CHARS): "request"
   * alone says little without its method, path, status and user.
   */
  fields: Record<string, LogFieldValue>;
}

export type LogFieldValue = string | number | boolean | null;

/** A kept field's longest text: 512 lines of a few fields each stay small. */
const FIELD_CHARS = 2_000;

/** A field's value as kept for /api/logs: plain values as they are, anything else as its text. */
function keptValue(v: unknown): LogFieldValue {
  if (v === null || typeof v === "number" || typeof v === "boolean") return v;
  let text: string;
  if (typeof v === "string") text = v;
  else if (v instanceof Error) text = v.message;
  else if (typeof v === "bigint") text = v.toString();
  else {
    try {
      // Nested keys are redacted as the top-level ones are.
      text =
        JSON.stringify(v, (k, x: unknown) => (SECRET_KEY.test(k) ? "[redacted]" : typeof x === "bigint" ? x.toString() : x)) ?? String(v);
    } catch {
      text = String(v);
    }
  }
  return text.length > FIELD_CHARS ? `${text.slice(0, FIELD_CHARS)}…` : text;
}

function keptFields(fields: Record<string, unknown>): Record<string, LogFieldValue> {
  const out: Record<string, LogFieldValue> = {};
  for (const [k, v] of Object.entries(fields)) if (v !== undefined) out[k] = keptValue(v);
  return out;
}

export class RingBuffer<T> {
  private items: T[] = [];
  private start = 0;
  constructor(readonly capacity: number) {}
  push(item: T): void {
    if (this.items.length < this.capacity) this.items.push(item);
    else {
      this.items[this.start] = item;
      this.start = (this.start + 1) % this.capacity;
    }
  }
  /** Oldest first. */
  toArray(): T[] {
    return [...this.items.slice(this.start), ...this.items.slice(0, this.start)];
  }
  get size(): number {
    return this.items.length;
  }
}

export interface LogSink {
  write(line: string): void;
}

export const stdoutSink: LogSink = { write: (line) => process.stdout.write(line + "\n") };

/** Keys whose values never reach a log line. */
const SECRET_KEY = /pass(word)?|secret|token|authorization|jaas|credential/i;

export function redact(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fields)) out[k] = SECRET_KEY.test(k) ? "[redacted]" : v;
  return out;
}

export interface LogRetention {
  maxLines: number;
  /** 0 keeps lines of any age. */
  maxAgeMs: number;
  /**
   * The clock lines are stamped with and aged by (epoch ms): a test sets it to age lines
   * instead of waiting for them to grow old.
   */
  now?: () => number;
}

export class LogHub {
  readonly info: RingBuffer<LogLine>;
  readonly metrics: RingBuffer<LogLine>;
  private minRank: number;
  private readonly now: () => number;

  constructor(
    level: Level = "info",
    private readonly sink: LogSink = stdoutSink,
    private readonly retention: LogRetention = { maxLines: 512, maxAgeMs: 0 },
  ) {
    this.minRank = LEVEL_RANK[level];
    this.now = retention.now ?? Date.now;
    this.info = new RingBuffer<LogLine>(retention.maxLines);
    this.metrics = new RingBuffer<LogLine>(retention.maxLines);
  }

  /** The kept lines of one kind, oldest first, without those past the retention age. */
  recent(kind: "INFO" | "METRICS", now = this.now()): LogLine[] {
    const lines = (kind === "INFO" ? this.info : this.metrics).toArray();
    const maxAge = this.retention.maxAgeMs;
    return maxAge > 0 ? lines.filter((l) => now - l.timestamp <= maxAge) : lines;
  }

  setLevel(level: Level): void {
    this.minRank = LEVEL_RANK[level];
  }

  logger(name: string): Logger {
    return new Logger(this, name);
  }

  emit(level: Level | "metrics", name: string, message: string, fields?: Record<string, unknown>, err?: unknown): void {
    const rank = level === "metrics" ? LEVEL_RANK.info : LEVEL_RANK[level];
    if (rank < this.minRank) return;
    const now = this.now();
    const stacktrace = err instanceof Error ? (err.stack ?? String(err)) : err === undefined ? "" : String(err);
    const upper = level.toUpperCase();
    const safe = fields ? redact(fields) : {};
    const line: LogLine = {
      timestamp: now,
      logger: name,
      stacktrace,
      thread: "main",
      message,
      time: new Date(now).toISOString(),
      level: upper,
      fields: level === "debug" ? {} : keptFields(safe),
    };
    if (level === "metrics") this.metrics.push(line);
    else if (level !== "debug") this.info.push(line);
    const record: Record<string, unknown> = { time: line.time, level: upper, logger: name, msg: message };
    Object.assign(record, safe);
    if (stacktrace) record.stack = stacktrace;
    this.sink.write(JSON.stringify(record));
  }
}

export class Logger {
  constructor(
    private readonly hub: LogHub,
    readonly name: string,
  ) {}
  debug(msg: string, fields?: Record<string, unknown>): void {
    this.hub.emit("debug", this.name, msg, fields);
  }
  info(msg: string, fields?: Record<string, unknown>): void {
    this.hub.emit("info", this.name, msg, fields);
  }
  warn(msg: string, fields?: Record<string, unknown>, err?: unknown): void {
    this.hub.emit("warn", this.name, msg, fields, err);
  }
  error(msg: string, fields?: Record<string, unknown>, err?: unknown): void {
    this.hub.emit("error", this.name, msg, fields, err);
  }
  metrics(msg: string, fields?: Record<string, unknown>): void {
    this.hub.emit("metrics", this.name, msg, fields);
  }
}
