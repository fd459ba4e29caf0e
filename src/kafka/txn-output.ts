/**
 * What one transaction writes, encoded as it is added: each record goes straight into the
 * record batch (format v2, grammar in record-set.ts) of its partition, so a processor's output
 * makes no per-record buffers or objects, and key and value bytes read from a fetch buffer
 * that the next fetch reuses are copied once, into the batch. A partition's batch stays under
 * the broker's batch size limit; more goes into the next batch, sent in a later request (an
 * idempotent producer sends one batch per partition per request).
 *
 * The batch header (producer id, epoch, base sequence, CRC) is written when the batch is sent:
 * see `finish`.
 */
import { crc32c } from "@platformatic/kafka";

/** Key, value or header bytes: a string is written as UTF-8. */
export type RecordBytes = Uint8Array | string | null;
export type TxnHeader = readonly [string, Uint8Array | null];

const BATCH_HEAD = 61;
const MAGIC = 2;
const TRANSACTIONAL = 1 << 4;
/** A batch's bytes at most (records beyond start a new batch); one record alone may exceed it. */
export const BATCH_LIMIT = 512 * 1024;
const FIRST_CAPACITY = 16 * 1024;

const byteLength = (b: RecordBytes): number => (b === null ? -1 : typeof b === "string" ? Buffer.byteLength(b, "utf8") : b.byteLength);

/** Bytes of an unsigned varint. */
function uvarintSize(u: number): number {
  let n = 1;
  while (u >= 0x80) {
    u = Math.floor(u / 128);
    n++;
  }
  return n;
}

/** Zig-zag of a signed integer (exact within 2^52). */
const zigzag = (n: number): number => (n >= 0 ? n * 2 : -n * 2 - 1);

/** One partition's record batch being filled. */
export class BatchBuilder {
  #buf: Buffer;
  #pos = BATCH_HEAD;
  count = 0;
  #firstTs = 0;
  #maxTs = 0;

  constructor(capacity = FIRST_CAPACITY) {
    this.#buf = Buffer.allocUnsafe(Math.max(capacity, BATCH_HEAD + 64));
  }

  /** Bytes held so far, header included. */
  get size(): number {
    return this.#pos;
  }

  /** Bytes of a record after its length prefix. */
  static bodySize(keyLen: number, valueLen: number, headersSize: number, tsDelta: number, offsetDelta: number): number {
    return (
      1 +
      uvarintSize(zigzag(tsDelta)) +
      uvarintSize(zigzag(offsetDelta)) +
      uvarintSize(zigzag(keyLen)) +
      Math.max(0, keyLen) +
      uvarintSize(zigzag(valueLen)) +
      Math.max(0, valueLen) +
      headersSize
    );
  }

  /** Bytes a record takes in its batch, length prefix included. */
  static recordSize(keyLen: number, valueLen: number, headersSize: number, tsDelta: number, offsetDelta: number): number {
    const body = BatchBuilder.bodySize(keyLen, valueLen, headersSize, tsDelta, offsetDelta);
    return uvarintSize(zigzag(body)) + body;
  }

  /** Appends one record whose key, value and headers sizes the caller measured (see TxnOutput.add). */
  add(
    key: RecordBytes,
    keyLen: number,
    value: RecordBytes,
    valueLen: number,
    timestamp: number,
    headers: readonly TxnHeader[] | null,
    headersSize: number,
  ): void {
    if (this.count === 0) {
      this.#firstTs = timestamp;
      this.#maxTs = timestamp;
    } else if (timestamp > this.#maxTs) this.#maxTs = timestamp;
    const tsDelta = timestamp - this.#firstTs;
    const body = BatchBuilder.bodySize(keyLen, valueLen, headersSize, tsDelta, this.count);
    this.#ensure(uvarintSize(zigzag(body)) + body);
    this.#uvarint(zigzag(body));
    this.#buf[this.#pos++] = 0; // attributes
    this.#uvarint(zigzag(tsDelta));
    this.#uvarint(zigzag(this.count));
    this.#field(key, keyLen);
    this.#field(value, valueLen);
    if (headers === null) this.#buf[this.#pos++] = 0;
    else {
      this.#uvarint(zigzag(headers.length));
      for (const [k, v] of headers) {
        this.#field(k, Buffer.byteLength(k, "utf8"));
        this.#field(v, v === null ? -1 : v.byteLength);
      }
    }
    this.count++;
  }

  /**
   * The complete batch: its header written for this producer and sequence, and its CRC. The
   * builder may not be added to after.
   */
  finish(producerId: bigint, producerEpoch: number, baseSequence: number, transactional: boolean): Buffer {
    const b = this.#buf;
    b.writeBigInt64BE(0n, 0); // baseOffset: the broker assigns it
    b.writeInt32BE(this.#pos - 12, 8); // batchLength: from partitionLeaderEpoch to the end
    b.writeInt32BE(-1, 12); // partitionLeaderEpoch: unknown to a producer
    b.writeInt8(MAGIC, 16);
    b.writeInt16BE(transactional ? TRANSACTIONAL : 0, 21);
    b.writeInt32BE(this.count - 1, 23);
    b.writeBigInt64BE(BigInt(this.#firstTs), 27);
    b.writeBigInt64BE(BigInt(this.#maxTs), 35);
    b.writeBigInt64BE(producerId, 43);
    b.writeInt16BE(producerEpoch, 51);
    b.writeInt32BE(baseSequence, 53);
    b.writeInt32BE(this.count, 57);
    const bytes = b.subarray(0, this.#pos);
    b.writeUInt32BE(crc32c(bytes.subarray(21)) >>> 0, 17);
    return bytes;
  }

  #ensure(more: number): void {
    const need = this.#pos + more;
    if (need <= this.#buf.length) return;
    let capacity = this.#buf.length * 2;
    while (capacity < need) capacity *= 2;
    const grown = Buffer.allocUnsafe(capacity);
    this.#buf.copy(grown, 0, 0, this.#pos);
    this.#buf = grown;
  }

  #uvarint(u: number): void {
    const b = this.#buf;
    while (u >= 0x80) {
      b[this.#pos++] = (u % 128) | 0x80;
      u = Math.floor(u / 128);
    }
    b[this.#pos++] = u;
  }

  #field(bytes: RecordBytes, len: number): void {
    this.#uvarint(zigzag(len));
    if (bytes === null || len <= 0) return;
    if (typeof bytes === "string") this.#buf.write(bytes, this.#pos, len, "utf8");
    else this.#buf.set(bytes, this.#pos);
    this.#pos += len;
  }
}

function headersBytes(headers: readonly TxnHeader[] | null): number {
  if (headers === null) return 1;
  let n = uvarintSize(zigzag(headers.length));
  for (const [k, v] of headers) {
    const kl = Buffer.byteLength(k, "utf8");
    const vl = v === null ? -1 : v.byteLength;
    n += uvarintSize(zigzag(kl)) + kl + uvarintSize(zigzag(vl)) + Math.max(0, vl);
  }
  return n;
}

/** The batches of one partition, in the order they are sent. */
export interface PartitionOutput {
  topic: string;
  partition: number;
  batches: BatchBuilder[];
}

/** Records for one transaction, by partition, encoded as added. */
export class TxnOutput {
  readonly #partitions = new Map<string, PartitionOutput>();
  readonly #limit: number;
  /** Records added. */
  records = 0;
  /** Bytes of key and value added. */
  bytes = 0;

  constructor(limit = BATCH_LIMIT) {
    this.#limit = limit;
  }

  add(
    topic: string,
    partition: number,
    key: RecordBytes,
    value: RecordBytes,
    timestamp: number = Date.now(),
    headers: readonly TxnHeader[] | null = null,
  ): void {
    const at = `${topic}\u0000${partition}`;
    let p = this.#partitions.get(at);
    if (p === undefined) {
      p = { topic, partition, batches: [] };
      this.#partitions.set(at, p);
    }
    const keyLen = byteLength(key);
    const valueLen = byteLength(value);
    let batch = p.batches[p.batches.length - 1];
    // A record that would take the batch past the limit starts the next one (an upper bound
    // of its size: deltas as wide as they get).
    const headersSize = headersBytes(headers);
    const bound = BatchBuilder.recordSize(keyLen, valueLen, headersSize, 2 ** 52, batch ? batch.count : 0);
    if (batch === undefined || (batch.count > 0 && batch.size + bound > this.#limit)) {
      batch = new BatchBuilder(Math.min(this.#limit, Math.max(FIRST_CAPACITY, bound + BATCH_HEAD)));
      p.batches.push(batch);
    }
    batch.add(key, keyLen, value, valueLen, timestamp, headers, headersSize);
    this.records++;
    this.bytes += Math.max(0, keyLen) + Math.max(0, valueLen);
  }

  /** Every partition written to, with its batches. */
  partitions(): PartitionOutput[] {
    return [...this.#partitions.values()];
  }

  get empty(): boolean {
    return this.records === 0;
  }
}
