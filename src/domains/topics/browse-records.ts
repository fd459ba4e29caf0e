/**
 * The message browser's read: a page of a topic's records, newest first or from a position,
 * each with its key, value, headers, timestamp and its type, partition and offset, the decoded
 * text beside the raw bytes. Decoded as a query decodes them (the topic's metadata, else per
 * record: registry Avro, JSON, text, else bytes), through the query's decoders.
 *
 * Bounded like a query and honest about it: at most `limit` records, BROWSE_LIMITS.answerBytes
 * of answer and as much again of reading, BROWSE_LIMITS.timeMs; `stopReason` and `message`
 * say which bound cut the answer and what was left, and each partition's `first` and `next`
 * say where to go on (older, newer). Knows nothing of HTTP.
 */

import type { Decoded, Decoder } from "../../engine/index.ts";
import { AppError, notFound } from "../../errors.ts";
import type { KafkaPool, RawRecord, RecordHeader } from "../../kafka/index.ts";
import type { SqlService, Viewer } from "../sql/service.ts";
import { BROWSE_LIMITS, type BrowseAnswer, type BrowsedRecord, type Seek } from "./schemas.ts";

export interface BrowseRequest {
  partition?: number;
  seek: Seek;
  offset?: number;
  time?: number;
  after?: Map<number, number>;
  before?: Map<number, number>;
  limit: number;
}

export interface TopicDecoders {
  keyDecoder: Decoder;
  valueDecoder: Decoder;
  keyFormat?: string;
  valueFormat?: string;
  /** The viewer's masking policies hide fields of the topic: the decoders mask them, and no raw bytes are shown. */
  masked?: boolean;
  /** The record's headers as the viewer may see them (masking policies' `_headers.<name>` patterns). */
  headers?: (headers: readonly RecordHeader[]) => readonly RecordHeader[];
}

export interface BrowseDeps {
  pool: KafkaPool;
  /** The topic's decoders, as a query without SET builds them for `viewer` (masked by the viewer's policies). */
  decoders(cluster: string, topic: string, viewer: Viewer): Promise<TopicDecoders>;
  /** Bounds; BROWSE_LIMITS unless a test makes them smaller. */
  limits?: Partial<typeof BROWSE_LIMITS>;
}

interface Range {
  partition: number;
  begin: number;
  end: number;
  from: number;
  to: number;
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });
const base64 = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString("base64");

function utf8OrNull(b: Uint8Array): string | null {
  try {
    return strictUtf8.decode(b);
  } catch {
    return null;
  }
}

/** What inference made of the bytes: Avro or Protobuf (a registry schema decoded them), JSON, text or bytes. */
function inferredFormat(bytes: Uint8Array, d: Decoded): string {
  if (d.format !== undefined) return d.format;
  if (d.typedAt !== undefined) return "AVRO";
  if (d.json !== undefined) return "JSON";
  if (typeof d.value === "string" && utf8OrNull(bytes) === null) return "BYTES";
  return typeof d.value === "string" ? "STRING" : "JSON";
}

function listOf(ps: number[]): string {
  return ps.length === 1 ? `partition ${ps[0]}` : `partitions ${ps.join(", ")}`;
}

export class RecordBrowser {
  readonly #limits: typeof BROWSE_LIMITS;
  /** Reads in flight per user. */
  readonly #running = new Map<string, number>();

  constructor(private readonly deps: BrowseDeps) {
    this.#limits = { ...BROWSE_LIMITS, ...deps.limits };
  }

  async browse(cluster: string, topic: string, req: BrowseRequest, viewer: Viewer): Promise<BrowseAnswer> {
    const user = viewer.name;
    const running = this.#running.get(user) ?? 0;
    if (running >= this.#limits.perUser)
      throw new AppError(
        "TOO_MANY_REQUESTS",
        `At most ${this.#limits.perUser} reads of records at once per user: wait for one to answer (each takes at most ${this.#limits.timeMs / 1000} s)`,
      );
    this.#running.set(user, running + 1);
    try {
      return await this.#browse(cluster, topic, req, viewer);
    } finally {
      const left = (this.#running.get(user) ?? 1) - 1;
      if (left <= 0) this.#running.delete(user);
      else this.#running.set(user, left);
    }
  }

  async #browse(cluster: string, topic: string, req: BrowseRequest, viewer: Viewer): Promise<BrowseAnswer> {
    const kafka = this.deps.pool.get(cluster);
    const [described] = await kafka.topics.describe([topic]);
    const count = described!.partitions;
    if (req.partition !== undefined && req.partition >= count)
      throw notFound(`Topic '${topic}' has no partition ${req.partition} (it has ${count})`);
    const all = req.partition !== undefined ? [req.partition] : Array.from({ length: count }, (_, i) => i);
    const newest = req.before !== undefined || (req.after === undefined && req.seek === "newest");

    // Raw ListOffsets to each leader: a partition without a leader is left out, not the read.
    const byTime = req.after === undefined && req.before === undefined && req.seek === "time";
    const [begins, ends, atTime = null] = await kafka.reads.offsetsAt(
      topic,
      all,
      byTime ? ["earliest", "latest", req.time!] : ["earliest", "latest"],
    );
    const leaderless = all.filter((p) => !begins.has(p) || !ends.has(p));
    const ranges: Range[] = [];
    for (const p of all) {
      const begin = begins.get(p);
      const end = ends.get(p);
      if (begin === undefined || end === undefined) continue;
      const clamp = (o: number) => Math.min(end, Math.max(begin, o));
      if (newest) {
        const below = req.before ? req.before.get(p) : end;
        if (below === undefined) continue;
        const to = clamp(below);
        ranges.push({ partition: p, begin, end, from: Math.max(begin, to - req.limit), to });
      } else {
        let from: number;
        if (req.after) from = clamp(req.after.get(p) ?? end);
        else if (req.seek === "oldest") from = begin;
        else if (req.seek === "offset") from = clamp(req.offset!);
        else {
          const at = atTime!.get(p) ?? -1;
          from = at < 0 ? end : clamp(at);
        }
        ranges.push({ partition: p, begin, end, from, to: Math.min(end, from + req.limit) });
      }
    }

    // The read: every range at once, bounded by time and bytes.
    const read: RawRecord[] = [];
    const seen = new Map<number, number>();
    const abort = new AbortController();
    let cut: "TIME" | "MAX_BYTES" | null = null;
    const timer = setTimeout(() => {
      cut ??= "TIME";
      abort.abort();
    }, this.#limits.timeMs);
    let readBytes = 0;
    const wanted = ranges.filter((r) => r.to > r.from).map((r) => ({ partition: r.partition, from: r.from, to: r.to }));
    try {
      if (wanted.length > 0)
        for await (const rec of kafka.reads.records({
          topic,
          partitions: wanted,
          signal: abort.signal,
          maxWaitMs: 100,
          maxBytes: 4 << 20,
        })) {
          readBytes += (rec.key?.byteLength ?? 0) + (rec.value?.byteLength ?? 0);
          if (readBytes > this.#limits.answerBytes * 2 && read.length > 0) {
            cut ??= "MAX_BYTES";
            abort.abort();
            break;
          }
          read.push(rec);
          seen.set(rec.partition, rec.offset);
        }
    } catch (e) {
      if (!abort.signal.aborted) throw e;
    } finally {
      clearTimeout(timer);
    }

    // Newest (or oldest) first over the partitions, by timestamp, then the limit.
    const direction = newest ? -1 : 1;
    read.sort((a, b) => direction * (a.timestamp - b.timestamp || a.partition - b.partition || a.offset - b.offset));
    const decoders = await this.deps.decoders(cluster, topic, viewer);
    const records: BrowsedRecord[] = [];
    let answerBytes = 0;
    let limitCut = false;
    for (const raw of read) {
      if (records.length >= req.limit) {
        limitCut = true;
        break;
      }
      const shown = await this.#record(raw, decoders);
      const size =
        (shown.key?.text.length ?? 0) +
        (shown.key?.base64.length ?? 0) +
        (shown.value?.text.length ?? 0) +
        (shown.value?.base64.length ?? 0);
      const headerSize = shown.headers.reduce((s, h) => s + h.key.length + (h.value?.length ?? 0), 0);
      if (answerBytes + size + headerSize > this.#limits.answerBytes && records.length > 0) {
        cut ??= "MAX_BYTES";
        break;
      }
      answerBytes += size + headerSize;
      records.push(shown);
    }

    // Where each partition goes on, from what was answered (records read but not answered are read again).
    const answered = new Map<number, { low: number; high: number; count: number }>();
    for (const r of records) {
      const a = answered.get(r.partition);
      if (!a) answered.set(r.partition, { low: r.offset, high: r.offset, count: 1 });
      else {
        a.low = Math.min(a.low, r.offset);
        a.high = Math.max(a.high, r.offset);
        a.count++;
      }
    }
    const readCount = new Map<number, number>();
    for (const r of read) readCount.set(r.partition, (readCount.get(r.partition) ?? 0) + 1);
    const partitions = ranges.map((r) => {
      const a = answered.get(r.partition);
      const everyReadAnswered = (a?.count ?? 0) === (readCount.get(r.partition) ?? 0);
      // The read reached `to` unless it was cut; then it reached the last offset it saw.
      const reached = cut === null ? r.to : (seen.get(r.partition) ?? r.from - 1) + 1;
      const next = newest ? r.end : everyReadAnswered ? Math.max(reached, r.from) : a ? a.high + 1 : r.from;
      const first = newest ? (everyReadAnswered && reached >= r.to ? r.from : a ? a.low : r.to) : r.from;
      return { partition: r.partition, begin: r.begin, end: r.end, from: r.from, next, first };
    });

    const more = partitions.filter((p) => (newest ? p.first > p.begin : p.next < p.end)).map((p) => p.partition);
    const stopReason: BrowseAnswer["stopReason"] = cut ?? (limitCut || more.length > 0 ? "LIMIT" : "END");
    const message = this.#message(stopReason, records.length, newest, more, leaderless);
    return { topicName: topic, order: newest ? "newest" : "oldest", records, partitions, stopReason, message };
  }

  #message(reason: BrowseAnswer["stopReason"], shown: number, newest: boolean, more: number[], leaderless: number[]): string | null {
    const skipped =
      leaderless.length > 0 ? ` ${listOf(leaderless)} had no leader and ${leaderless.length === 1 ? "was" : "were"} not read.` : "";
    const left = more.length > 0 ? ` ${newest ? "Older" : "Newer"} records remain in ${listOf(more)}.` : "";
    switch (reason) {
      case "END":
        return skipped === "" ? null : skipped.trim();
      case "LIMIT":
        return `${shown} record${shown === 1 ? "" : "s"} shown: the limit.${left}${skipped}`;
      case "MAX_BYTES":
        return `The answer stopped at ${this.#limits.answerBytes / (1024 * 1024)} MiB of records (${shown} shown).${left}${skipped}`;
      case "TIME":
        return `The read stopped after ${this.#limits.timeMs / 1000} s (${shown} shown): the brokers were slow to answer.${left}${skipped}`;
    }
  }

  async #record(raw: RawRecord, decoders: TopicDecoders): Promise<BrowsedRecord> {
    const [key, value] = await Promise.all([
      this.#side(raw.key, decoders.keyDecoder, decoders.keyFormat, decoders.masked === true),
      this.#side(raw.value, decoders.valueDecoder, decoders.valueFormat, decoders.masked === true),
    ]);
    return {
      partition: raw.partition,
      offset: raw.offset,
      timestamp: raw.timestamp,
      timestampType: raw.timestampType,
      key,
      value,
      headers: (decoders.headers ? decoders.headers(raw.headers) : raw.headers).map((h) => {
        if (h.value === null) return { key: h.key, value: null, base64: false };
        const text = utf8OrNull(h.value);
        return text === null ? { key: h.key, value: base64(h.value), base64: true } : { key: h.key, value: text, base64: false };
      }),
    };
  }

  /** `masked`: the decoder masks; neither the raw bytes nor a decoding error's text (which may quote them) are shown. */
  async #side(bytes: Uint8Array | null, decoder: Decoder, format: string | undefined, masked: boolean): Promise<BrowsedRecord["key"]> {
    if (bytes === null) return null;
    const rawCut = !masked && bytes.byteLength > this.#limits.rawBytes;
    const raw = masked ? "" : base64(rawCut ? bytes.subarray(0, this.#limits.rawBytes) : bytes);
    let text: string;
    let shownFormat: string;
    let error: string | undefined;
    try {
      const d = await decoder(bytes);
      shownFormat = format ?? inferredFormat(bytes, d);
      text = d.json ?? (typeof d.value === "string" ? d.value : JSON.stringify(d.value));
    } catch (e) {
      // A record its format does not fit is shown as its bytes, with the reason.
      error = masked ? "The record could not be decoded (a masking policy hides its bytes)" : e instanceof Error ? e.message : String(e);
      shownFormat = "BYTES";
      text = masked ? "" : base64(bytes);
    }
    const textCut = text.length > this.#limits.textChars;
    return {
      size: bytes.byteLength,
      format: shownFormat,
      text: textCut ? text.slice(0, this.#limits.textChars) : text,
      textCut,
      base64: raw,
      rawCut,
      ...(error !== undefined ? { error } : {}),
      ...(masked ? { masked } : {}),
    };
  }
}

/**
 * A query's decoders of the topic (its metadata, else inference per record). A side whose
 * stored type cannot be decoded here (PROTOBUF without a registry or a descriptor set) is shown
 * as its bytes rather than failing the page.
 */
export async function topicDecoders(
  sql: Pick<SqlService, "decoders" | "maskFor">,
  cluster: string,
  topic: string,
  viewer: Viewer,
): Promise<TopicDecoders> {
  const [decoders, mask] = await Promise.all([clearDecoders(sql, cluster, topic), sql.maskFor(viewer, cluster, topic)]);
  if (mask === null) return decoders;
  return {
    ...decoders,
    keyDecoder: mask.decoder(decoders.keyDecoder, "key"),
    valueDecoder: mask.decoder(decoders.valueDecoder, "value"),
    masked: true,
    headers: (h) => mask.maskHeaders(h),
  };
}

async function clearDecoders(sql: Pick<SqlService, "decoders">, cluster: string, topic: string): Promise<TopicDecoders> {
  try {
    return await sql.decoders(cluster, topic, {});
  } catch (err) {
    if (!(err instanceof AppError) || err.code !== "UNSUPPORTED") throw err;
    // Each side on its own: the one that decodes keeps its decoder, the other is read as bytes.
    const keyAsIs = await sql.decoders(cluster, topic, { valueFormat: "BYTES" }).catch(() => null);
    const valueAsIs = await sql.decoders(cluster, topic, { keyFormat: "BYTES" }).catch(() => null);
    const bytes = await sql.decoders(cluster, topic, { keyFormat: "BYTES", valueFormat: "BYTES" });
    const keyFormat = keyAsIs ? keyAsIs.keyFormat : "BYTES";
    const valueFormat = valueAsIs ? valueAsIs.valueFormat : "BYTES";
    return {
      keyDecoder: keyAsIs?.keyDecoder ?? bytes.keyDecoder,
      valueDecoder: valueAsIs?.valueDecoder ?? bytes.valueDecoder,
      ...(keyFormat ? { keyFormat } : {}),
      ...(valueFormat ? { valueFormat } : {}),
    };
  }
}
