/**
 * Decodes the record set of one partition in a Fetch response (record batches, format v2)
 * straight from its bytes: offsets and timestamps as numbers, keys and values as views into the
 * fetched bytes (no copies), no intermediate objects per batch. This is the hot loop of every
 * topic read, so it reads varints inline rather than through a reader object.
 *
 * Wire grammar (message format v2, KIP-98; big-endian; VARINT and VARLONG are zig-zag
 * varints; @n is the byte offset in the batch that the code below reads at):
 *
 *   RecordBatch =>
 *     baseOffset => INT64                 @0
 *     batchLength => INT32                @8   bytes from partitionLeaderEpoch to the end
 *     partitionLeaderEpoch => INT32       @12
 *     magic => INT8                       @16  2; older formats are refused
 *     crc => UINT32                       @17  CRC-32C of attributes..end; not checked
 *     attributes => INT16                 @21  bits 0-2 compression (0 none, 1 gzip,
 *                                              2 snappy, 3 lz4, 4 zstd), bit 3 timestamp
 *                                              type (1: LogAppendTime), bit 4 transactional,
 *                                              bit 5 control (a transaction marker)
 *     lastOffsetDelta => INT32            @23
 *     baseTimestamp => INT64              @27
 *     maxTimestamp => INT64               @35  the record timestamps under LogAppendTime
 *     producerId => INT64                 @43
 *     producerEpoch => INT16              @51
 *     baseSequence => INT32               @53
 *     recordsCount => INT32               @57
 *     records => Record{recordsCount}     @61  one compressed block when bits 0-2 say so
 *
 *   Record =>
 *     length => VARINT                    bytes of the rest of the record
 *     attributes => INT8                  unused
 *     timestampDelta => VARLONG
 *     offsetDelta => VARINT
 *     keyLength => VARINT                 -1: null key
 *     key => BYTES
 *     valueLength => VARINT               -1: null value
 *     value => BYTES
 *     headersCount => VARINT
 *     headers => Header{headersCount}
 *
 *   Header =>
 *     headerKeyLength => VARINT
 *     headerKey => STRING                 UTF-8
 *     headerValueLength => VARINT         -1: null value
 *     headerValue => BYTES
 */

import { compressionsAlgorithmsByBitmask } from "@platformatic/kafka";
import type { RawRecord, RecordHeader } from "./types.ts";

const BATCH_HEAD = 61;
const COMPRESSION_MASK = 0x07;
const LOG_APPEND_TIME = 1 << 3;
const TRANSACTIONAL = 1 << 4;
const CONTROL = 1 << 5;
const NO_HEADERS: RecordHeader[] = [];
Object.freeze(NO_HEADERS);

/** Where a partition's read is: the next offset wanted and the exclusive end (null: none). */
export interface ReadCursor {
  partition: number;
  next: number;
  end: number | null;
}

/** A transaction the broker reports as aborted in the fetched range (READ_COMMITTED). */
export interface AbortedTransaction {
  producerId: bigint;
  firstOffset: bigint;
}

/** What one record set held, for the push-down proof: records and offsets of its batches. */
export interface RecordSetStats {
  records: number;
  firstOffset: number;
  lastOffset: number;
}

let buf: Buffer = Buffer.alloc(0);
let pos = 0;

function uvarint(): number {
  let b = buf[pos++]!;
  if (b < 0x80) return b;
  let v = b & 0x7f;
  let shift = 7;
  do {
    b = buf[pos++]!;
    v += (b & 0x7f) * 2 ** shift;
    shift += 7;
  } while (b >= 0x80 && shift < 70);
  return v;
}

/** A zig-zag varint (or varlong) as a number; exact below 2^53. */
function varint(): number {
  const u = uvarint();
  return u % 2 === 0 ? u / 2 : -(u + 1) / 2;
}

/** The bytes of a length-prefixed field: null for length -1. */
function bytesField(): Buffer | null {
  const n = varint();
  if (n < 0) return null;
  const start = pos;
  pos += n;
  return buf.subarray(start, pos);
}

/**
 * Appends to `out` the records of `bytes` from the cursor on and below its end, moving the
 * cursor past what was read. Transaction markers and records of aborted transactions are not
 * records. A batch cut short at the end of the response (the broker's size limit) is left for
 * the next fetch.
 */
export function decodeRecordSet(
  bytes: Buffer,
  topic: string,
  cursor: ReadCursor,
  aborted: readonly AbortedTransaction[] | null,
  out: RawRecord[],
): RecordSetStats {
  const stats: RecordSetStats = { records: 0, firstOffset: -1, lastOffset: -1 };
  // Aborted transactions in offset order, and the producers whose aborted transaction is open.
  const pendingAborts = aborted && aborted.length > 0 ? [...aborted].sort((a, b) => (a.firstOffset < b.firstOffset ? -1 : 1)) : null;
  const abortedProducers = new Set<bigint>();
  let at = 0;
  while (bytes.length - at >= BATCH_HEAD) {
    const batchLength = bytes.readInt32BE(at + 8);
    const batchEnd = at + 12 + batchLength;
    if (batchEnd > bytes.length) break;
    const baseOffset = Number(bytes.readBigInt64BE(at));
    const magic = bytes[at + 16]!;
    const attributes = bytes.readInt16BE(at + 21);
    const lastOffset = baseOffset + bytes.readInt32BE(at + 23);
    const count = bytes.readInt32BE(at + 57);
    const batchStart = at;
    at = batchEnd;
    if (stats.firstOffset < 0) stats.firstOffset = baseOffset;
    stats.lastOffset = lastOffset;
    if (magic !== 2) throw new Error(`Record batch format ${magic} at offset ${baseOffset} is not supported`);

    const control = (attributes & CONTROL) !== 0;
    let skip = false;
    if (pendingAborts) {
      const producerId = bytes.readBigInt64BE(batchStart + 43);
      while (pendingAborts.length > 0 && Number(pendingAborts[0]!.firstOffset) <= lastOffset)
        abortedProducers.add(pendingAborts.shift()!.producerId);
      if (control) {
        // The marker ends the producer's transaction: what follows from it is not aborted.
        abortedProducers.delete(producerId);
      } else skip = (attributes & TRANSACTIONAL) !== 0 && abortedProducers.has(producerId);
    }
    if (!control) stats.records += count;
    if (control || skip || lastOffset < cursor.next) {
      skipPast(cursor, lastOffset);
      continue;
    }

    const codec = attributes & COMPRESSION_MASK;
    if (codec === 0) {
      buf = bytes;
      pos = batchStart + BATCH_HEAD;
    } else {
      const algorithm = compressionsAlgorithmsByBitmask[codec];
      if (!algorithm) throw new Error(`Record batch at offset ${baseOffset} uses unknown compression ${codec}`);
      buf = algorithm.decompressSync(bytes.subarray(batchStart + BATCH_HEAD, batchEnd));
      pos = 0;
    }
    const logAppendTime = (attributes & LOG_APPEND_TIME) !== 0;
    const baseTimestamp = Number(bytes.readBigInt64BE(batchStart + 27));
    const maxTimestamp = Number(bytes.readBigInt64BE(batchStart + 35));
    const timestampType = logAppendTime ? "LogAppendTime" : "CreateTime";
    let ended = false;
    for (let i = 0; i < count; i++) {
      const length = varint();
      const recordEnd = pos + length;
      pos++; // attributes: unused
      const timestampDelta = varint();
      const offset = baseOffset + varint();
      if (offset < cursor.next) {
        pos = recordEnd;
        continue;
      }
      if (cursor.end !== null && offset >= cursor.end) {
        ended = true;
        break;
      }
      const key = bytesField();
      const value = bytesField();
      const headerCount = varint();
      let headers = NO_HEADERS;
      if (headerCount > 0) {
        headers = new Array(headerCount);
        for (let h = 0; h < headerCount; h++) {
          const k = bytesField();
          headers[h] = { key: k === null ? "" : k.toString("utf8"), value: bytesField() };
        }
      }
      pos = recordEnd;
      cursor.next = offset + 1;
      out.push({
        topic,
        partition: cursor.partition,
        offset,
        timestamp: logAppendTime ? maxTimestamp : baseTimestamp + timestampDelta,
        timestampType,
        key,
        value,
        headers,
      });
    }
    buf = EMPTY;
    if (ended) {
      cursor.next = cursor.end!;
      break;
    }
    skipPast(cursor, lastOffset);
  }
  return stats;
}

const EMPTY = Buffer.alloc(0);

/** Moves the cursor past a batch that ends at `lastOffset`, but never beyond its end. */
export function skipPast(cursor: ReadCursor, lastOffset: number): void {
  const after = lastOffset + 1;
  if (after > cursor.next) cursor.next = cursor.end !== null && after > cursor.end ? cursor.end : after;
}
