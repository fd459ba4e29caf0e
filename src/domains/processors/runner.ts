/**
 * One runner of a processor: a member of the processor's consumer group that reads the
 * partitions Kafka gives it (read_committed), runs the program over each record, and writes
 * output and input offsets in one Kafka transaction per commit interval. Where it was is only
 * ever what Kafka committed: after any failure (a rebalance, a fenced producer, a broker lost)
 * the runner drops what it holds and starts over from the committed offsets and the state
 * restored from its changelog, so every input record counts exactly once in the output.
 */
import type { GroupMember, KafkaCluster, RawRecord, TxnHeader } from "../../kafka/index.ts";
import { partitionForKey, txnFailure } from "../../kafka/index.ts";
import type { Logger } from "../../log/logger.ts";
import type { RecordView } from "../../sql/index.ts";
import { recordText } from "../../sql/values.ts";
import { AggregateState, type Emitted, formatBytes, type StateBudget, StateBudgetError } from "./aggregate.ts";
import { CommitBatch, type CommitLeg } from "./commit-batch.ts";
import { InvalidProgramError } from "./programs.ts";
import { NO_FIGURES, type RunnerFigures, type RunnerSetup, type RunnerStateName, type StreamOutput, type StreamProgram } from "./types.ts";

/** What a runner reports, to whoever runs it (the engine: the store and the API). */
export interface RunnerObserver {
  /** Its state changed: PENDING (with the error while it retries), RUNNING, FAILED (with why), STOPPED. */
  state?(state: RunnerStateName, error: string | null): void;
  /**
   * Before a phase that may exhaust the instance's memory (restoring the state, a state past
   * half its budget), and null after it: kept in the store, so an instance that dies in it does
   * not start the processor again blindly. Awaited before the phase starts.
   */
  risk?(risk: string | null): Promise<void>;
  /** A transaction committed: the runner's figures after it. */
  committed?(figures: RunnerFigures): void;
}

export interface RunnerOptions {
  kafka: KafkaCluster;
  processorId: string;
  index: number;
  groupId: string;
  transactionalId: string;
  /** Builds the program and decoders; called at each (re)start, so a restart sees the topic's formats anew. */
  setup(): Promise<RunnerSetup>;
  log: Logger;
  /** Told of its state, its risky phases and its commits. */
  observer?: RunnerObserver;
  /** The state budget of the processor on this instance (shared by its runners here). */
  budget?: StateBudget;
  /** Longest a runner keeps failing before it is FAILED (it retries with backoff until then). */
  failAfterMs?: number;
  /** Records or bytes held before a commit, besides the program's commit interval. */
  maxPendingRecords?: number;
  maxPendingBytes?: number;
  now?: () => number;
}

/** A record the program cannot take under error.policy=stop: the runner fails at once, no retry. */
export class PoisonRecordError extends Error {
  override name = "PoisonRecordError";
}

const RETRY_FIRST_MS = 500;
const RETRY_MAX_MS = 15_000;
const DEFAULT_FAIL_AFTER_MS = 5 * 60_000;
/**
 * A session of a failing runner that reads this long with nothing to commit (a quiet input)
 * works again; one with records to commit works again only once they are committed.
 */
const QUIET_HEALTHY_MS = 5_000;

/** The wait before the attempt after `failures` failures in a row: 0.5 s, doubling, at most 15 s. */
function retryDelay(failures: number): number {
  return Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** Math.max(0, failures - 1));
}
const TICK = Symbol("tick");
const MOVED = Symbol("moved");
const FAILED = Symbol("failed");
const NUDGED = Symbol("nudged");
const QUIET = Symbol("quiet");
/** Longest wait for the member to rejoin after its group moved on (the rebalance timeout and some). */
const REJOIN_WAIT_MS = 30_000;

/** What the program sees of one input record; key and value decoded before it runs. */
class InputView implements RecordView {
  key: unknown = null;
  value: unknown = null;
  partition = 0;
  offset = 0;
  timestamp = 0;
  keySize = 0;
  valueSize = 0;
  lastOffset(): number {
    // A stream has no end: LAST_OFFSET() is the record's own next offset.
    return this.offset + 1;
  }
}

/**
 * A new key or value as text (the output takes strings as UTF-8). Fetched bytes written as they
 * are go into the output's batch at once, before the read reuses its buffer.
 */
function outputText(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  return typeof v === "string" ? v : recordText(v);
}

const headersOf = (raw: RawRecord): TxnHeader[] | null => (raw.headers.length === 0 ? null : raw.headers.map((h) => [h.key, h.value]));

type Writer = ReturnType<KafkaCluster["processing"]["writer"]>;
/** One owned topic's read, and its next batch asked for. */
type Input = { topic: string; it: AsyncIterator<RawRecord[]>; next: Promise<IteratorResult<RawRecord[]>> | null };
/** What ends a wait of the read loop. */
type Woken =
  | { input: Input; result: IteratorResult<RawRecord[]> }
  | typeof TICK
  | typeof MOVED
  | typeof FAILED
  | typeof NUDGED
  | typeof QUIET;

/** One assignment of partitions, read until the group moves or the runner stops: what its stages share. */
interface Assignment {
  member: GroupMember;
  writer: Writer;
  setup: RunnerSetup;
  program: StreamProgram;
  /** The generation these partitions were given under: it fences every commit. */
  fencing: ReturnType<GroupMember["fencing"]>;
  /** The member's joins when the assignment began (a commit that finds the group moved waits for the next). */
  joinsAtStart: number;
  /** Partitions owned, by topic (the source, and the repartition topic). */
  owned: Map<string, number[]>;
  /** The topic whose records are aggregated (the source, or the repartition topic). */
  aggInput: string;
  state: AggregateState | null;
  /** The risky phase marked in the store, if any (see RunnerObserver.risk). */
  risk: string | null;
  batch: CommitBatch;
  /** Results of the state (closed windows, table rows) to write. */
  emitted: Emitted[];
  view: InputView;
  inputs: Input[];
  reading: AbortController;
  /** Ends the wait for records when a read moved past transaction markers alone. */
  nudge: (() => void) | null;
  /** The commit under way; a failed one fails the next turn of the read loop. */
  inFlight: Promise<void>;
  commitFailure: unknown;
  /** Resolves when a commit fails: a quiet input must not hide it. */
  failed: Promise<typeof FAILED>;
  onFailure: () => void;
}

export class Runner {
  readonly #opts: RunnerOptions;
  readonly #now: () => number;
  readonly #stop = new AbortController();
  #state: RunnerStateName = "PENDING";
  #error: string | null = null;
  #figures: RunnerFigures = { ...NO_FIGURES };
  #done: Promise<void> | null = null;
  /** Set when the group moved (rebalance): the session reads its assignment again. */
  #moved = false;
  /** Joins completed by the member (each brings an assignment). */
  #joins = 0;
  /** Set when a commit found the group moved on: the session waits for the member to rejoin. */
  #rejoinAfter: number | null = null;
  #wake: (() => void) | null = null;
  #interrupt: (() => void) | null = null;
  /** The failures in a row since the runner last worked (null: it works). */
  #streak: { since: number; failures: number; message: string } | null = null;

  constructor(opts: RunnerOptions) {
    this.#opts = opts;
    this.#now = opts.now ?? Date.now;
  }

  get state(): RunnerStateName {
    return this.#state;
  }

  get error(): string | null {
    return this.#error;
  }

  get figures(): RunnerFigures {
    return this.#figures;
  }

  start(): void {
    this.#done ??= this.#run();
  }

  /** Stops reading, commits what it holds, leaves the group. */
  async stop(): Promise<void> {
    this.#stop.abort();
    this.#wake?.();
    this.#interrupt?.();
    await this.#done;
    this.#set("STOPPED", null);
  }

  #set(state: RunnerStateName, error: string | null): void {
    if (state === this.#state && error === this.#error) return;
    this.#state = state;
    this.#error = error;
    this.#opts.observer?.state?.(state, error);
  }

  async #run(): Promise<void> {
    const o = this.#opts;
    const failAfter = o.failAfterMs ?? DEFAULT_FAIL_AFTER_MS;
    const who = { processor: o.processorId, runner: o.index };
    while (!this.#stop.signal.aborted) {
      try {
        await this.#session();
        return;
      } catch (err) {
        if (this.#stop.signal.aborted) return;
        const message = err instanceof Error ? err.message : String(err);
        const now = this.#now();
        const streak = (this.#streak ??= { since: now, failures: 0, message });
        streak.failures++;
        const failingForMs = now - streak.since;
        // A state past its budget would only grow past it again: failed at once, as a poison record.
        const final = err instanceof PoisonRecordError || err instanceof StateBudgetError || err instanceof InvalidProgramError;
        const delay = retryDelay(streak.failures);
        // FAILED once the next attempt would start past failAfter from the first failure: a
        // processor that cannot run says so within failAfter, whatever the failure.
        if (final || failingForMs + delay > failAfter) {
          o.log.warn("processor runner FAILED", {
            ...who,
            error: message,
            failures: streak.failures,
            failingForMs,
            ...(final ? {} : { failAfterMs: failAfter }),
          });
          this.#set("FAILED", message);
          return;
        }
        // One line per run of failures (the first, and one when the error changes); the end of
        // the run (recovered or FAILED) gives the count.
        const line = { ...who, error: message, failures: streak.failures, retryInMs: delay };
        if (streak.failures === 1) o.log.warn("processor runner failed; retrying", line);
        else if (message !== streak.message) o.log.warn("processor runner failed otherwise; retrying", line);
        else o.log.debug("processor runner failed again; retrying", line);
        streak.message = message;
        this.#set("PENDING", message);
        await this.#sleep(delay);
      }
    }
  }

  /**
   * The runner works: a transaction committed, or it reads with nothing to commit (nothing owned,
   * or a quiet input). Ends a run of failures: the next failure starts a new one, and is logged.
   */
  #healthy(): void {
    const streak = this.#streak;
    if (streak !== null) {
      this.#streak = null;
      this.#opts.log.info("processor runner recovered", {
        processor: this.#opts.processorId,
        runner: this.#opts.index,
        failures: streak.failures,
        failingForMs: this.#now() - streak.since,
      });
    }
    this.#set("RUNNING", null);
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      const signal = this.#stop.signal;
      function done() {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        resolve();
      }
      signal.addEventListener("abort", done, { once: true });
    });
  }

  /** One membership of the group and one producer, until stopped or failed. */
  async #session(): Promise<void> {
    const o = this.#opts;
    const setup = await o.setup();
    const program = setup.program;
    const member = o.kafka.processing.member({
      groupId: o.groupId,
      instanceId: `${o.groupId}-${o.index}`,
      topics: setup.repartition ? [program.source, setup.repartition.topic] : [program.source],
      onAssigned: () => {
        this.#joins++;
        this.#moveOn();
      },
      onRevoking: () => this.#moveOn(),
    });
    const writer = o.kafka.processing.writer(o.transactionalId);
    try {
      await writer.init();
      await member.join();
      while (!this.#stop.signal.aborted) {
        this.#moved = false;
        this.#rejoinAfter = null;
        await this.#assignment(member, writer, setup);
        if (this.#rejoinAfter !== null) {
          // The member rejoins by itself (its heartbeat learns of the rebalance); a member the
          // group dropped for good fails the session, which starts over with a new one.
          const joinsBefore = this.#rejoinAfter;
          const deadline = this.#now() + REJOIN_WAIT_MS;
          while (this.#joins <= joinsBefore && !this.#stop.signal.aborted) {
            if (this.#now() >= deadline) throw new Error(`the consumer group did not rebalance within ${REJOIN_WAIT_MS / 1000} s`);
            await this.#sleep(100);
          }
        } else if (!this.#moved && !this.#stop.signal.aborted) {
          // Nothing to read (no partition owned): wait for the group to change.
          await new Promise<void>((resolve) => {
            this.#wake = resolve;
            if (this.#moved || this.#stop.signal.aborted) resolve();
          });
          this.#wake = null;
        }
      }
    } finally {
      await writer.close();
      await member.close();
    }
  }

  #moveOn(): void {
    this.#moved = true;
    this.#wake?.();
    this.#interrupt?.();
  }

  /**
   * Reads what the member owns now, from its committed offsets, until the group moves or the
   * runner stops, in stages: what is owned, the state restored, the inputs opened, then the reads
   * (each batch through the program into the next commit) with their commits.
   */
  async #assignment(member: GroupMember, writer: Writer, setup: RunnerSetup) {
    const a = this.#assigned(member, writer, setup);
    if (a === null) {
      // Nothing to read is not failing: another member owns the partitions.
      this.#healthy();
      return;
    }
    try {
      await this.#restore(a);
      await this.#consume(a);
    } finally {
      a.state?.dispose();
      await this.#markRisk(a, null).catch(() => {});
    }
  }

  /** What the member owns now (null: nothing), and the assignment's state, empty. */
  #assigned(member: GroupMember, writer: Writer, setup: RunnerSetup): Assignment | null {
    const o = this.#opts;
    const program = setup.program;
    const joinsAtStart = this.#joins;
    // Read together: the generation these partitions were given under fences every commit.
    const fencing = member.fencing();
    const assignment = member.assignment();
    const topics = setup.repartition ? [program.source, setup.repartition.topic] : [program.source];
    const owned = new Map(topics.map((t) => [t, assignment.partitions.get(t) ?? []]));
    const ownedCount = [...owned.values()].reduce((n, ps) => n + ps.length, 0);
    this.#figures = { ...this.#figures, partitions: ownedCount };
    if (ownedCount === 0) return null;
    const agg = program.aggregate;
    let onFailure = () => {};
    // A failed transaction ends the wait for records too: a quiet input must not hide it.
    const failed = new Promise<typeof FAILED>((resolve) => {
      onFailure = () => resolve(FAILED);
    });
    return {
      member,
      writer,
      setup,
      program,
      fencing,
      joinsAtStart,
      owned,
      aggInput: setup.repartition ? setup.repartition.topic : program.source,
      state: agg && setup.changelog ? new AggregateState(agg, program.settings.graceMs, setup.changelog, o.budget) : null,
      risk: null,
      batch: new CommitBatch(),
      emitted: [],
      view: new InputView(),
      inputs: [],
      reading: new AbortController(),
      nudge: null,
      inFlight: Promise.resolve(),
      commitFailure: null,
      failed,
      onFailure,
    };
  }

  /** Marks the risky phase in the store (see RunnerObserver.risk), or clears it (null). */
  async #markRisk(a: Assignment, next: string | null): Promise<void> {
    const risk = this.#opts.observer?.risk;
    if (next === a.risk || !risk) return;
    await risk(next);
    a.risk = next;
  }

  /** Over half the budget: marked; back under a quarter: cleared. */
  async #checkStateRisk(a: Assignment): Promise<void> {
    const budget = this.#opts.budget;
    if (!a.state || !budget) return;
    if (budget.used > budget.limitBytes / 2) {
      if (a.risk === null) await this.#markRisk(a, `holding ${formatBytes(budget.used)} of state, over half its budget`);
    } else if (a.risk !== null && budget.used < budget.limitBytes / 4) await this.#markRisk(a, null);
  }

  /** The state of each owned partition as the last committed transaction left it, from the changelog. */
  async #restore(a: Assignment): Promise<void> {
    const { state, setup } = a;
    if (!state || !setup.changelog) return;
    const kafka = this.#opts.kafka;
    for (const partition of a.owned.get(a.aggInput) ?? []) {
      const [end] = await kafka.offsets.list([{ topic: setup.changelog, partition }], "latest");
      if (!end || end.offset === 0) continue;
      await this.#markRisk(a, "restoring its state from the changelog");
      for await (const r of kafka.reads.records({ topic: setup.changelog, partitions: [{ partition, from: 0, to: end.offset }] })) {
        state.restore(partition, r.key, r.value);
      }
    }
    if (a.risk !== null) await this.#markRisk(a, null);
    await this.#checkStateRisk(a);
  }

  /** Reads the owned partitions from their committed offsets into the program, committing in transactions. */
  async #consume(a: Assignment): Promise<void> {
    const abortReading = () => a.reading.abort();
    this.#stop.signal.addEventListener("abort", abortReading, { once: true });
    await this.#openInputs(a);
    try {
      await this.#read(a);
      // Stopping or moving on: what is held is committed while the generation still owns it.
      if (!this.#moved) await this.#commit(a, true);
      else await a.inFlight;
    } catch (err) {
      await a.inFlight.catch(() => {});
      if (txnFailure(err) === "group") {
        // The group moved on under the transaction: it is aborted, the new assignment is read.
        this.#moved = true;
        this.#rejoinAfter = a.joinsAtStart;
        return;
      }
      throw err;
    } finally {
      this.#stop.signal.removeEventListener("abort", abortReading);
      this.#interrupt = null;
      a.reading.abort();
      for (const input of a.inputs) {
        input.next?.catch(() => {});
        await input.it.return?.(undefined).catch(() => {});
      }
    }
  }

  /** A read of each owned topic, from the group's committed offsets (the reset policy where none). */
  async #openInputs(a: Assignment): Promise<void> {
    const { member, program, setup, batch } = a;
    const kafka = this.#opts.kafka;
    const topics = setup.repartition ? [program.source, setup.repartition.topic] : [program.source];
    for (const topic of topics) {
      const partitions = a.owned.get(topic)!;
      if (partitions.length === 0) continue;
      const committed = await member.committed(topic, partitions);
      const missing = partitions.filter((p) => committed.get(p) === null);
      // A repartition topic is read from its start: all of it is this processor's.
      const reset =
        missing.length === 0
          ? new Map<number, number>()
          : await kafka.reads.offsetsOf(topic, missing, topic === program.source ? program.settings.autoOffsetReset : "earliest");
      const from = (partition: number) => committed.get(partition) ?? reset.get(partition) ?? 0;
      for (const partition of partitions) batch.committedAt.set(`${topic}/${partition}`, from(partition));
      const it = kafka.reads
        .batches({
          topic,
          partitions: partitions.map((partition) => ({ partition, from: from(partition) })),
          follow: true,
          onPosition: (partition, next) => {
            if (batch.position(topic, partition, next, this.#now())) a.nudge?.();
          },
          signal: a.reading.signal,
          // Fetched bytes live in a buffer the next fetch reuses: what outlives a batch (keys and
          // values written as they are) is copied into the output's batches at once.
          reuseBuffers: true,
          // A broker that restarts is waited for a while; past it the session fails and retries.
          retryUntil: this.#now() + 60_000,
        })
        [Symbol.asyncIterator]();
      a.inputs.push({ topic, it, next: null });
    }
  }

  /**
   * The read loop: waits for the first of the inputs' next batches, the commit interval, a
   * rebalance or stop, a failed commit, a position moved, or (failing before) a quiet while; and
   * does what it calls for, until the group moves, the runner stops or the inputs end.
   */
  async #read(a: Assignment): Promise<void> {
    const { batch } = a;
    const interval = a.program.settings.commitIntervalMs;
    // A rebalance or a stop ends the wait for records at once (a quiet topic sends none).
    const interrupted = new Promise<typeof MOVED>((resolve) => {
      this.#interrupt = () => resolve(MOVED);
      if (this.#moved || this.#stop.signal.aborted) resolve(MOVED);
    });
    // A runner that was failing is RUNNING again once it commits (or reads a quiet input a while).
    if (this.#streak === null) this.#set("RUNNING", null);
    const readingSince = this.#now();
    const nextOf = (input: Input): Promise<IteratorResult<RawRecord[]>> => {
      input.next ??= input.it.next();
      return input.next;
    };
    for (;;) {
      if (a.commitFailure !== null) throw a.commitFailure;
      if (this.#stop.signal.aborted || this.#moved || a.inputs.length === 0) break;
      const wait = batch.firstAt === null ? null : Math.max(0, batch.firstAt + interval - this.#now());
      let timer: ReturnType<typeof setTimeout> | undefined;
      const waits: Array<Promise<Woken>> = a.inputs.map((input) => nextOf(input).then((result) => ({ input, result })));
      waits.push(interrupted, a.failed);
      let quietTimer: ReturnType<typeof setTimeout> | undefined;
      if (wait !== null) waits.push(new Promise<typeof TICK>((resolve) => (timer = setTimeout(() => resolve(TICK), wait))));
      else {
        waits.push(new Promise<typeof NUDGED>((resolve) => (a.nudge = () => resolve(NUDGED))));
        // Failing before, nothing to commit now: a quiet input read a while is working again.
        if (this.#streak !== null) {
          const left = Math.max(0, readingSince + QUIET_HEALTHY_MS - this.#now());
          waits.push(new Promise<typeof QUIET>((resolve) => (quietTimer = setTimeout(() => resolve(QUIET), left))));
        }
      }
      const got = await Promise.race(waits);
      clearTimeout(timer);
      clearTimeout(quietTimer);
      a.nudge = null;
      if (got === MOVED) break;
      // A position to commit: the next turn waits the commit interval for it.
      if (got === FAILED || got === NUDGED) continue;
      if (got === QUIET) {
        await a.inFlight.catch(() => {});
        if (a.commitFailure === null && batch.firstAt === null) this.#healthy();
        continue;
      }
      if (got === TICK) {
        await this.#commit(a);
        continue;
      }
      const { input, result } = got;
      input.next = null;
      if (result.done) {
        a.inputs.splice(a.inputs.indexOf(input), 1);
        continue;
      }
      await this.#take(a, input.topic, result.value);
      // The next fetch goes out while this batch is committed.
      nextOf(input).catch(() => {});
      await this.#afterBatch(a);
    }
  }

  /** One fetched batch of `topic` through the program, into the next commit, under the error policy. */
  async #take(a: Assignment, topic: string, records: RawRecord[]): Promise<void> {
    const { batch, view, setup, program } = a;
    const o = this.#opts;
    // Records in are the source's: a repartitioned record is not counted a second time.
    const counts = topic === program.source ? 1 : 0;
    for (const raw of records) {
      batch.recordsIn += counts;
      batch.read(topic, raw.partition, raw.offset, this.#now());
      try {
        view.partition = raw.partition;
        view.offset = raw.offset;
        view.timestamp = raw.timestamp;
        view.keySize = raw.key?.byteLength ?? 0;
        view.valueSize = raw.value?.byteLength ?? 0;
        const k = raw.key === null ? null : setup.decodeKey(raw.key);
        view.key = k instanceof Promise ? await k : k;
        const v = raw.value === null ? null : setup.decodeValue(raw.value);
        view.value = v instanceof Promise ? await v : v;
        this.#process(a, topic, raw);
      } catch (err) {
        // The budget is the processor's, not the record's: no error policy skips it.
        if (err instanceof StateBudgetError) throw err;
        const why = `record ${raw.offset} of partition ${raw.partition} of '${topic}': ${err instanceof Error ? err.message : String(err)}`;
        if (program.settings.errorPolicy === "stop") {
          // What came before it is written; the record itself is not consumed.
          batch.recordsIn -= counts;
          batch.offsets.set(`${topic}/${raw.partition}`, { topic, partition: raw.partition, offset: raw.offset });
          await this.#commit(a, true);
          throw new PoisonRecordError(`Cannot process ${why}`);
        }
        if (topic === program.source && setup.repartition) batch.failedUp++;
        else batch.failedDown++;
        o.log.debug("processor skipped a record", { processor: o.processorId, reason: why });
      }
    }
  }

  /** After a batch: windows the state closes are written; a commit when the batch is full or due. */
  async #afterBatch(a: Assignment): Promise<void> {
    const { batch, state } = a;
    if (state) {
      state.close(a.emitted);
      this.#flushEmitted(a);
      await this.#checkStateRisk(a);
    }
    const o = this.#opts;
    if (
      batch.records >= (o.maxPendingRecords ?? 20_000) ||
      batch.bytes >= (o.maxPendingBytes ?? 16 * 1024 * 1024) ||
      (batch.firstAt !== null && this.#now() - batch.firstAt >= a.program.settings.commitIntervalMs)
    ) {
      await this.#commit(a);
    }
  }

  /** What one input record does: output, a repartitioned copy, or a change of the state. */
  #process(a: Assignment, topic: string, raw: RawRecord): void {
    const { program, view, setup } = a;
    const fromSource = topic === program.source;
    if (fromSource && !program.filter(view)) return;
    if (program.project) {
      this.#output(a, program.project(view), raw, raw.partition, raw.timestamp);
    } else if (fromSource && setup.repartition) {
      // Records of one group meet in one partition of the repartition topic.
      const groupKey = JSON.stringify(program.aggregate!.groupKey(view));
      a.batch.rekeyed.add(
        setup.repartition.topic,
        partitionForKey(groupKey, setup.repartition.partitions),
        raw.key,
        raw.value,
        raw.timestamp,
        headersOf(raw),
      );
    } else if (a.state) {
      a.state.add(raw.partition, view);
    }
  }

  /** One output record into the next commit: a record's own (`raw`), or a result of the state (null). */
  #output(a: Assignment, out: StreamOutput, raw: RawRecord | null, partition: number, timestamp: number): void {
    const { program, setup } = a;
    // `*` writes the input's value bytes as they are (Avro stays Avro); a new key as text.
    const key = out.key === undefined ? (raw?.key ?? null) : outputText(out.key);
    // The broker refuses the whole transaction for one keyless record in a compacted topic:
    // it is refused here instead, as a record the program cannot write.
    if (key === null && setup.targetCompacted) {
      this.#unwritable(a, raw, partition, new Error(`Topic '${program.target}' is compacted and takes no record without a key`));
      return;
    }
    let value: Uint8Array | string | null;
    if (raw !== null && program.columns === null) value = raw.value;
    else if (!setup.encodeValue) value = outputText(out.value);
    else {
      try {
        value = setup.encodeValue(out.value);
      } catch (err) {
        this.#unwritable(a, raw, partition, err);
        return;
      }
    }
    a.batch.output.add(
      program.target,
      key !== null ? partitionForKey(key, setup.targetPartitions) : partition % setup.targetPartitions,
      key,
      value,
      timestamp,
      raw ? headersOf(raw) : null,
    );
    a.batch.recordsOut++;
  }

  /**
   * A record's own output that cannot be written is thrown: the read loop applies the error
   * policy to that record. A result of the state (a closed window, a table row) follows the
   * policy here.
   */
  #unwritable(a: Assignment, raw: RawRecord | null, partition: number, err: unknown): void {
    if (raw !== null) throw err;
    const { program } = a;
    const why = `a result for partition ${partition} of '${program.target}': ${err instanceof Error ? err.message : String(err)}`;
    if (program.settings.errorPolicy === "stop") throw new PoisonRecordError(`Cannot write ${why}`);
    a.batch.failedDown++;
    this.#opts.log.debug("processor skipped a result", { processor: this.#opts.processorId, reason: why });
  }

  #flushEmitted(a: Assignment): void {
    for (const e of a.emitted) this.#output(a, e.out, null, e.partition, e.timestamp);
    a.emitted.length = 0;
  }

  /**
   * Starts the transactions of what is held, after the previous ones have ended; records read
   * meanwhile go into the next. A failed transaction fails the next call (and the loop checks
   * it at every turn): the assignment then starts over from what Kafka committed, dropping
   * whatever was read after it, the state included.
   *
   * A program with a repartition topic commits in two transactions, one after the other: the
   * source's offsets with the records re-keyed into the repartition topic, then the
   * repartition topic's offsets with the state's changes and the output. A failing output
   * (a target that refuses what it is sent) then fails only the second: the source's records
   * are re-keyed once, and the attempts after a failure do not send them again.
   */
  async #commit(a: Assignment, wait = false): Promise<void> {
    await a.inFlight;
    const { state, batch, writer, member, fencing } = a;
    if (state) {
      state.close(a.emitted);
      state.take(batch.output, a.emitted, this.#now());
      this.#flushEmitted(a);
    }
    if (batch.empty) return;
    const { up, down } = batch.take(a.setup.repartition !== undefined, a.program.source, state?.late ?? 0);
    if (state) state.late = 0;
    a.inFlight = (async () => {
      for (const leg of [up, down]) {
        if (leg.records.empty && leg.offsets.length === 0) continue;
        await writer.commit(leg.records, leg.offsets, member, fencing);
        this.#committed(leg);
      }
      this.#healthy();
    })();
    a.inFlight.catch((err: unknown) => {
      a.commitFailure ??= err;
      a.onFailure();
    });
    if (wait) await a.inFlight;
  }

  /** A transaction committed: its counts join the figures. */
  #committed(leg: CommitLeg): void {
    const f = this.#figures;
    this.#figures = {
      ...f,
      recordsIn: f.recordsIn + leg.recordsIn,
      recordsOut: f.recordsOut + leg.recordsOut,
      failed: f.failed + leg.failed,
      late: f.late + leg.late,
      commits: f.commits + 1,
    };
    this.#opts.observer?.committed?.(this.#figures);
  }
}
