/**
 * Fetch (versions 13 to 17) with the record sets left as bytes: the client's own Fetch parses
 * every record into objects as the response arrives, which is most of the cost of reading a
 * topic. Here the response keeps each partition's record set as one buffer for
 * record-set.ts to decode, and the request is the client's own.
 *
 * The response layout is the same from version 13 (topic ids) to 17: later versions only add
 * tagged fields, which are skipped.
 */

import {
  createAPI,
  fetchV13,
  fetchV14,
  fetchV15,
  fetchV16,
  fetchV17,
  type Reader,
  ResponseError,
  readKnownTaggedFields,
} from "@platformatic/kafka";
import type { AbortedTransaction } from "./record-set.ts";

export interface RawFetchPartition {
  partitionIndex: number;
  errorCode: number;
  highWatermark: number;
  abortedTransactions: AbortedTransaction[] | null;
  /**
   * The record set's bytes as they arrived: pieces of the network reads, not copied into one
   * buffer here (the reader does it, into a buffer it may reuse). Null when there are none.
   */
  records: RecordBytes | null;
}

export interface RecordBytes {
  segments: Buffer[];
  length: number;
}

export interface RawFetchResponse {
  responses: Array<{ topicId: string; partitions: RawFetchPartition[] }>;
}

function parseRawFetch(_correlationId: number, apiKey: number, apiVersion: number, reader: Reader): RawFetchResponse {
  const errors: Array<[string, [number, null]]> = [];
  reader.readInt32(); // throttle_time_ms
  const errorCode = reader.readInt16();
  if (errorCode !== 0) errors.push(["", [errorCode, null]]);
  reader.readInt32(); // session_id
  const response: RawFetchResponse = {
    responses: reader.readArray((r: Reader, i: number) => ({
      topicId: r.readUUID(),
      partitions: r.readArray(
        (r: Reader, j: number) => {
          const partitionIndex = r.readInt32();
          const partitionError = r.readInt16();
          const highWatermark = Number(r.readInt64());
          r.readInt64(); // last_stable_offset
          r.readInt64(); // log_start_offset
          const abortedTransactions = r.readNullableArray((r: Reader) => ({ producerId: r.readInt64(), firstOffset: r.readInt64() })) as
            | AbortedTransaction[]
            | null;
          r.readInt32(); // preferred_read_replica
          let size = r.readUnsignedVarInt();
          let records: RecordBytes | null = null;
          if (size > 1) {
            size--;
            records = { segments: r.buffer.subarray(r.position, r.position + size).buffers, length: size };
            r.skip(size);
          }
          readKnownTaggedFields(r, {});
          if (partitionError !== 0) errors.push([`/responses/${i}/partitions/${j}`, [partitionError, null]]);
          return { partitionIndex, errorCode: partitionError, highWatermark, abortedTransactions, records };
        },
        true,
        false,
      ),
    })),
  };
  readKnownTaggedFields(reader, {});
  if (errors.length > 0) throw new ResponseError(apiKey, apiVersion, Object.fromEntries(errors), response);
  return response;
}

const REQUESTS: Record<number, typeof fetchV17.createRequest> = {
  13: fetchV13.createRequest,
  14: fetchV14.createRequest,
  15: fetchV15.createRequest,
  16: fetchV16.createRequest,
  17: fetchV17.createRequest,
};

const apis = new Map<number, ReturnType<typeof createAPI>>();

/** The raw Fetch API for a version the broker chose, or null below 13 (topic names). */
export function rawFetchApi(version: number): ReturnType<typeof createAPI> | null {
  const createRequest = REQUESTS[version];
  if (!createRequest) return null;
  let api = apis.get(version);
  if (!api) {
    api = createAPI(1, version, createRequest, parseRawFetch);
    apis.set(version, api);
  }
  return api;
}
