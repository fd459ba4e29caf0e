/**
 * The read stages of a query: the records of the planned ranges are pulled a fetched batch at a
 * time, evaluated in slices (slice/merge) and each is decoded, filtered, projected and written
 * to the sink (decode + filter), within the caps (StopRules). Nothing is fetched ahead: a
 * consumer of the events that stops pulling stops the fetching.
 *
 * Evaluation runs in slices: every SLICE_RECORDS records (or after a large one) it looks at the
 * clock, gives the event loop a turn once a slice has run SLICE_MS, hands on records that have
 * waited FLUSH_MS, and ends the query when max.query.time has passed. A timer alone could not
 * stop it: no timer fires while a slice runs.
 *
 * A record is taken synchronously unless its key or value needs the registry (a schema not yet
 * loaded): only then is a promise awaited, so the common record costs no turn of the loop.
 */

import type { RawRecord } from "../kafka/types.ts";
import type { QueryPlan, RecordView } from "../sql/index.ts";
import { type Decoded, DecodeError, type Decoder, decodesJsonText, decodesPlainText, isPlainText } from "./decoders.ts";
import type { Prefilter } from "./prefilter.ts";
import { overBudget, type QueryError, type QueryEvent, type QueryProgress, type RecordSink } from "./query.ts";
import type { Tally } from "./query-end.ts";
import type { ReadObserver, RecordSource } from "./record-source.ts";
import { BATCH_MAX_BYTES, type Caps, type StopRules } from "./stop-rules.ts";

/** Records between two looks at the clock: cheap enough per record, often enough per slice. */
const SLICE_RECORDS = 64;
/** Evaluation gives the event loop a turn once it has run this long without one. */
const SLICE_MS = 5;
/** A record this large is followed by a look at the clock, whatever the count. */
const LARGE_RECORD_BYTES = 64 * 1024;
/** Records waiting in the sink are handed on at least this often. */
const FLUSH_MS = 200;

/** A macrotask: lets timers, sockets and other requests run before evaluation goes on. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

const EMPTY = new Uint8Array(0);
const NULL_VALUE: Decoded = { value: null, json: "null" };

/** What became of a record: go on, hand the full batch on first, or end the read. */
const NEXT = 0;
const FLUSH = 1;
const BREAK = 2;
type Outcome = typeof NEXT | typeof FLUSH | typeof BREAK;

/** Hands the records in the sink on; the bytes are valid until the next pull. */
export function handOn(progress: QueryProgress, sink: RecordSink): QueryEvent {
  progress.producedBytes += sink.byteLength;
  return { type: "records", count: sink.count, bytes: sink.take() };
}

/**
 * What the filter and projection see of the record at hand. One instance serves the whole
 * query (the evaluator keeps no reference to it); the key is decoded only when read.
 */
class View implements RecordView {
  value: unknown = null;
  partition = 0;
  offset = 0;
  timestamp = 0;
  keySize = 0;
  valueSize = 0;
  #keyBytes: Uint8Array | null = null;
  #key: Decoded | null | undefined = undefined;

  constructor(
    readonly lastOffset: (partition: number) => number,
    private readonly keyDecoder: Decoder,
  ) {}

  setKey(bytes: Uint8Array | null): void {
    this.#keyBytes = bytes;
    this.keySize = bytes?.byteLength ?? 0;
    this.#key = bytes === null ? null : undefined;
  }

  async setKeyAsync(bytes: Uint8Array): Promise<void> {
    this.setKey(bytes);
    const k = this.keyDecoder(bytes);
    this.#key = k instanceof Promise ? await k : k;
  }

  #decoded(): Decoded | null {
    if (this.#key === undefined) {
      const k = this.keyDecoder(this.#keyBytes!);
      if (k instanceof Promise) throw new DecodeError("the key needs a schema that is not loaded");
      this.#key = k;
    }
    return this.#key;
  }

  get key(): unknown {
    return this.#decoded()?.value ?? null;
  }

  /** The key as the answer shows it: text as it is, anything else as JSON, null when absent. */
  keyText(): string | null {
    const k = this.#decoded();
    if (k === null) return null;
    return typeof k.value === "string" ? k.value : (k.json ?? JSON.stringify(k.value) ?? null);
  }
}

/** What the read stages work with. */
export interface ReadContext {
  source: RecordSource;
  plan: QueryPlan;
  keyDecoder: Decoder;
  valueDecoder: Decoder;
  /** Rules records out from their raw value before decoding (see prefilter.ts). */
  prefilter?: Prefilter | null | undefined;
  caps: Caps;
  rules: StopRules;
  tally: Tally;
  progress: QueryProgress;
  sink: RecordSink;
  clock: () => number;
  /** End offset of each partition when the query began (LAST_OFFSET()). */
  ends: Map<number, number>;
  /** A continuous query: records are handed on after every fetch. */
  follow: boolean;
}

/**
 * Slice/merge and decode + filter over the batches of one read. The hot path: its state is in
 * plain fields, and a record is taken without a promise unless it needs one.
 */
export class ReadStage {
  /** What ended the read early for a reason of the query itself (the memory budget). */
  failure: QueryError | null = null;
  private readonly ctx: ReadContext;
  // What each record touches, held in fields of their own.
  private readonly progress: QueryProgress;
  private readonly sink: RecordSink;
  private readonly rules: StopRules;
  private readonly tally: Tally;
  private readonly caps: Caps;
  private readonly prefilter: Prefilter | null;
  private readonly valueDecoder: Decoder;
  private readonly view: View;
  /** Every record matches and is shown whole: JSON text need not be parsed, only checked. */
  private readonly rawJson: boolean;
  /** Keys whose text is their bytes are written as they are, not decoded. */
  private readonly rawKeys: boolean;
  /** Records left before the next look at the clock. */
  private untilCheck = SLICE_RECORDS;
  private sliceStart: number;
  private lastFlush: number;
  private sampleWindowStart = Number.NEGATIVE_INFINITY;
  private sampledInWindow = 0;

  constructor(ctx: ReadContext) {
    this.ctx = ctx;
    this.progress = ctx.progress;
    this.sink = ctx.sink;
    this.rules = ctx.rules;
    this.tally = ctx.tally;
    this.caps = ctx.caps;
    this.prefilter = ctx.prefilter ?? null;
    this.valueDecoder = ctx.valueDecoder;
    const { plan, ends, keyDecoder } = ctx;
    this.view = new View((partition: number) => ends.get(partition) ?? 0, keyDecoder);
    this.rawJson = plan.projectionIsStar && !plan.hasFilter && decodesJsonText(ctx.valueDecoder);
    this.rawKeys = this.rawJson && decodesPlainText(keyDecoder);
    this.sliceStart = ctx.clock();
    this.lastFlush = this.sliceStart;
  }

  /** Reads the ranges from the source: the records of the answer, a batch at a time. */
  read(ranges: Array<{ partition: number; from: number; to: number }>, retryUntil: number): AsyncGenerator<QueryEvent, void, undefined> {
    const { source, plan, rules, follow } = this.ctx;
    const partitions = ranges.map((r) => ({ partition: r.partition, from: r.from, to: r.to }));
    return this.records(source.read({ topic: plan.topic, partitions, signal: rules.signal, follow, retryUntil }, this.observer()));
  }

  /** What the read tells: fetches counted per partition (push-down), outages, partitions left out, rounds for the idle rule. */
  private observer(): ReadObserver {
    const { progress, rules } = this.ctx;
    const scanOf = new Map(progress.scans.map((s) => [s.partition, s]));
    return {
      fetched: (f) => {
        const s = scanOf.get(f.partition);
        if (!s) return;
        s.fetches++;
        s.fetchedRecords += f.records;
        if (s.firstFetched < 0 || f.firstOffset < s.firstFetched) s.firstFetched = f.firstOffset;
        if (f.lastOffset > s.lastFetched) s.lastFetched = f.lastOffset;
      },
      fetching: (since) => rules.fetching(since),
      outage: (o) => {
        progress.outage = o;
      },
      skipped: (skipped) => void progress.skippedPartitions.push(skipped),
    };
  }

  /** Slice/merge: the batches' records taken in slices; full batches of the answer handed on. */
  private async *records(batches: AsyncIterable<RawRecord[]>): AsyncGenerator<QueryEvent, void, undefined> {
    const { rules, sink, progress } = this;
    const clock = this.ctx.clock;
    read: for await (const fetched of batches) {
      for (const raw of fetched) {
        if (--this.untilCheck <= 0) {
          this.untilCheck = SLICE_RECORDS;
          const now = clock();
          if (now >= rules.deadline) {
            rules.stop("MAX_QUERY_TIME");
            break read;
          }
          if (sink.count > 0 && now - this.lastFlush > FLUSH_MS) {
            rules.waitingForReader = true;
            yield handOn(progress, sink);
            rules.waitingForReader = false;
            this.lastFlush = this.sliceStart = clock();
          } else if (now - this.sliceStart >= SLICE_MS) {
            await nextTurn();
            this.sliceStart = clock();
          }
          if (rules.reason !== null) break read;
        }
        const taken = this.take(raw);
        let outcome = typeof taken === "number" ? taken : await taken;
        if (outcome === FLUSH) {
          rules.waitingForReader = true;
          yield handOn(progress, sink);
          rules.waitingForReader = false;
          this.lastFlush = clock();
          outcome = this.afterRecord();
        }
        if (outcome === BREAK) break read;
      }
      if (this.ctx.follow && sink.count > 0) {
        rules.waitingForReader = true;
        yield handOn(progress, sink);
        rules.waitingForReader = false;
        this.lastFlush = clock();
      }
    }
  }

  /** Decode + filter: one record counted, tested and, when it matches, written to the sink. */
  private take(raw: RawRecord): Outcome | Promise<Outcome> {
    const { progress, tally, caps, sink } = this;
    const keyBytes = raw.key;
    const valueBytes = raw.value ?? EMPTY;
    const bytes = (keyBytes?.byteLength ?? 0) + valueBytes.byteLength;
    const { partition, offset } = raw;
    tally.nexts[partition] = offset + 1;
    progress.readRecords++;
    progress.totalSizeRead += bytes;
    if (bytes >= LARGE_RECORD_BYTES) {
      this.untilCheck = 1;
      if (bytes + sink.byteLength > caps.maxMemory) {
        this.failure = overBudget(caps.maxMemory);
        return BREAK;
      }
    }
    const min = tally.mins[partition];
    if (min === undefined || offset < min) tally.mins[partition] = offset;
    if ((tally.maxs[partition] ?? -1) < offset) tally.maxs[partition] = offset;
    const prefilter = this.prefilter;
    if (prefilter && raw.value !== null && !prefilter(valueBytes)) return this.readCap();
    if (this.rawJson && raw.value !== null && tally.toSkip === 0) return this.takeJson(raw, bytes);
    return this.decode(raw, bytes);
  }

  /** The JSON text of the value as it is (rawJson); anything but plain JSON text is decoded. */
  private takeJson(raw: RawRecord, bytes: number): Outcome | Promise<Outcome> {
    const keyBytes = raw.key;
    if (keyBytes === null || (this.rawKeys && isPlainText(keyBytes))) return this.addJson(raw, bytes, keyBytes);
    if (keyBytes.byteLength >= 5 && keyBytes[0] === 0) {
      return this.view.setKeyAsync(keyBytes).then(
        () => this.addJson(raw, bytes, undefined),
        (err: unknown) => this.jsonUndecodable(err),
      );
    }
    this.view.setKey(keyBytes);
    return this.addJson(raw, bytes, undefined);
  }

  /** `key`: the key as written, or undefined for the view's decoded key. */
  private addJson(raw: RawRecord, bytes: number, key: Uint8Array | null | undefined): Outcome | Promise<Outcome> {
    let matched: boolean;
    try {
      const text = key === undefined ? this.view.keyText() : key;
      // False for anything but plain JSON text: decoded below.
      matched = this.sink.addJson(raw.timestamp, raw.partition, text, raw.offset, raw.value!, raw.headers);
    } catch (err) {
      return this.jsonUndecodable(err);
    }
    return matched ? this.matched(raw, bytes) : this.decode(raw, bytes);
  }

  private jsonUndecodable(err: unknown): Outcome {
    if (!(err instanceof DecodeError)) throw err;
    this.progress.skippedRecords++;
    return this.afterRecord();
  }

  /** The value decoded (a registry's schema may have to be fetched first). */
  private decode(raw: RawRecord, bytes: number): Outcome | Promise<Outcome> {
    let decoded: Decoded | Promise<Decoded>;
    try {
      decoded = raw.value === null ? NULL_VALUE : this.valueDecoder(raw.value);
    } catch (err) {
      return this.undecodable(err);
    }
    if (decoded instanceof Promise) {
      return decoded.then(
        (value) => this.withValue(raw, bytes, value),
        (err: unknown) => this.undecodable(err),
      );
    }
    return this.withValue(raw, bytes, decoded);
  }

  /** The key is decoded when the query reads it; only a possible registry id is fetched first. */
  private withValue(raw: RawRecord, bytes: number, value: Decoded): Outcome | Promise<Outcome> {
    const view = this.view;
    view.value = value.value;
    view.partition = raw.partition;
    view.offset = raw.offset;
    view.timestamp = raw.timestamp;
    view.valueSize = raw.value?.byteLength ?? 0;
    const keyBytes = raw.key;
    if (keyBytes !== null && keyBytes.byteLength >= 5 && keyBytes[0] === 0) {
      return view.setKeyAsync(keyBytes).then(
        () => this.evaluate(raw, bytes, value),
        (err: unknown) => this.undecodable(err),
      );
    }
    view.setKey(keyBytes);
    return this.evaluate(raw, bytes, value);
  }

  /** The WHERE, OFFSET and the projection, on the record in the view. */
  private evaluate(raw: RawRecord, bytes: number, value: Decoded): Outcome {
    const { tally, caps, sink } = this;
    const plan = this.ctx.plan;
    const view = this.view;
    try {
      if (!plan.filter(view)) return this.afterRecord();
      if (tally.toSkip > 0) {
        tally.toSkip--;
        return this.afterRecord();
      }
      const outValue = plan.projectionIsStar
        ? (value.json ?? JSON.stringify(value.value) ?? "null")
        : plan.projectText(view, value.typedAt);
      // The text is held twice while it is written (and escaped once more).
      if (outValue.length >= LARGE_RECORD_BYTES) {
        this.untilCheck = 1;
        if (bytes + 2 * outValue.length + sink.byteLength > caps.maxMemory) {
          this.failure = overBudget(caps.maxMemory);
          return BREAK;
        }
      }
      sink.add(raw.timestamp, raw.partition, view.keyText(), raw.offset, outValue, raw.headers);
    } catch (err) {
      return this.undecodable(err);
    }
    return this.matched(raw, bytes);
  }

  private undecodable(err: unknown): Outcome {
    if (err instanceof DecodeError) {
      this.progress.skippedRecords++;
      return this.afterRecord();
    }
    if (err instanceof RangeError) {
      // A string or array past what the engine can hold: the query asked too much.
      this.failure = overBudget(this.caps.maxMemory, err);
      return BREAK;
    }
    throw err;
  }

  /** Sampling, then the caps on what the answer holds: max.size, LIMIT, a full batch. */
  private matched(raw: RawRecord, bytes: number): Outcome {
    const { progress, caps, sink, rules, tally } = this;
    // Sampling (`_sample`/`_sampleWindow`): past its count in the current window of the clock,
    // a matching record is taken back and counts as skipped.
    const sample = this.ctx.plan.sample;
    if (sample !== null) {
      const now = this.ctx.clock();
      if (now - this.sampleWindowStart >= sample.windowMs) {
        this.sampleWindowStart = now;
        this.sampledInWindow = 0;
      }
      if (this.sampledInWindow >= sample.records) {
        sink.dropLast();
        return this.afterRecord();
      }
      this.sampledInWindow++;
    }
    if (progress.producedBytes + sink.byteLength > caps.maxOutput) {
      sink.dropLast();
      // Taken back: the record is read again by a resumed query.
      tally.nexts[raw.partition] = raw.offset;
      tally.sizeReached = "answer";
      rules.stop("MAX_SIZE");
      return BREAK;
    }
    progress.totalRecords++;
    progress.size += bytes;
    if (progress.totalRecords >= caps.limit) {
      rules.stop("LIMIT");
      return BREAK;
    }
    if (sink.count >= caps.batchSize || sink.byteLength >= BATCH_MAX_BYTES) return FLUSH;
    return this.afterRecord();
  }

  /** max.size on what is read, then any other reason to stop. */
  private afterRecord(): Outcome {
    if (this.readCap() === BREAK) return BREAK;
    return this.rules.reason !== null ? BREAK : NEXT;
  }

  /** max.size on what is read (a record ruled out by the prefilter checks only this). */
  private readCap(): Outcome {
    if (this.progress.totalSizeRead >= this.caps.maxRead) {
      this.rules.stop("MAX_SIZE");
      return BREAK;
    }
    return NEXT;
  }
}
