/**
 * Fetch (versions 13 to 17) with the record sets left as bytes: the client's own Fetch parses
 * every record into objects as the response arrives, which is most of the cost of reading a
 * topic. Here the response keeps each partition's record set as one buffer for
 * record-set.ts to decode, and the request is the client's own.
 *
 * The response layout is the same from version 13 (topic ids) to 17: later versions only add
 * tagged fields, which are skipped. test/kafka/raw-fetch.test.ts checks this grammar, and the
 * client internals used here, against the pinned client.
 *
 * Wire grammar (Kafka's message specs; [x] is a COMPACT_ARRAY: unsigned varint length + 1,
 * 0 for null; TAG_BUFFER is an unsigned varint count of tagged fields, then per field an
 * unsigned varint tag, an unsigned varint size and the bytes):
 *
 *   Request header (v2, written by the client's Connection.send):
 *     request_api_key INT16 (1) | request_api_version INT16 | correlation_id INT32
 *     | client_id NULLABLE_STRING (int16 length) | TAG_BUFFER
 *
 *   Fetch Request (13-17) => [replica_id] max_wait_ms min_bytes max_bytes isolation_level
 *       session_id session_epoch [topics] [forgotten_topics_data] rack_id TAG_BUFFER
 *     replica_id => INT32                 13-14 only, -1 (a consumer); gone from 15
 *     max_wait_ms => INT32
 *     min_bytes => INT32                  1
 *     max_bytes => INT32
 *     isolation_level => INT8             1: READ_COMMITTED
 *     session_id => INT32                 0 and epoch -1: a full fetch that opens no session
 *     session_epoch => INT32
 *     topics => topic_id [partitions] TAG_BUFFER
 *       topic_id => UUID
 *       partitions => partition current_leader_epoch fetch_offset last_fetched_epoch
 *           log_start_offset partition_max_bytes TAG_BUFFER
 *         partition => INT32
 *         current_leader_epoch => INT32   -1
 *         fetch_offset => INT64
 *         last_fetched_epoch => INT32     -1
 *         log_start_offset => INT64       -1 (a consumer)
 *         partition_max_bytes => INT32
 *     forgotten_topics_data => topic_id [partitions] TAG_BUFFER     always empty here
 *     rack_id => COMPACT_STRING           ""
 *
 *   Response header (v1): correlation_id INT32 | TAG_BUFFER (read by the client)
 *
 *   Fetch Response (13-17) => throttle_time_ms error_code session_id [responses] TAG_BUFFER
 *     throttle_time_ms => INT32
 *     error_code => INT16
 *     session_id => INT32
 *     responses => topic_id [partitions] TAG_BUFFER
 *       topic_id => UUID
 *       partitions => partition_index error_code high_watermark last_stable_offset
 *           log_start_offset [aborted_transactions] preferred_read_replica records TAG_BUFFER
 *         partition_index => INT32
 *         error_code => INT16
 *         high_watermark => INT64
 *         last_stable_offset => INT64
 *         log_start_offset => INT64
 *         aborted_transactions => producer_id first_offset TAG_BUFFER   nullable
 *           producer_id => INT64
 *           first_offset => INT64
 *         preferred_read_replica => INT32
 *         records => COMPACT_RECORDS      unsigned varint length + 1 (0: null), then the
 *                                         record batches (grammar in record-set.ts)
 *         partition tags (skipped): 0 diverging_epoch, 1 current_leader, 2 snapshot_id
 *     response tags (skipped): 0 node_endpoints (16 on)
 */

import {
  type Broker,
  type Connection,
  type Consumer,
  createAPI,
  fetchV13,
  fetchV14,
  fetchV15,
  fetchV16,
  fetchV17,
  kGetApi,
  kGetConnection,
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

const READ_COMMITTED = 1;

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

/** The Fetch to use: the raw one at the version the broker speaks, or null for the client's. */
export function negotiatedFetch(consumer: Consumer, decoder: "loupe" | "client"): Promise<ReturnType<typeof rawFetchApi>> {
  if (decoder === "client") return Promise.resolve(null);
  return new Promise((resolve, reject) => {
    consumer[kGetApi]("Fetch", (err: Error | null, api?: { version: number }) => (err ? reject(err) : resolve(rawFetchApi(api!.version))));
  });
}

/** One raw Fetch to `broker` on the consumer's connection to it (see the grammar above). */
export function rawFetch(
  consumer: Consumer,
  api: NonNullable<ReturnType<typeof rawFetchApi>>,
  broker: Broker,
  maxWaitMs: number,
  maxBytes: number,
  topicId: string,
  partitions: Array<{
    partition: number;
    fetchOffset: bigint;
    partitionMaxBytes: number;
    currentLeaderEpoch: number;
    lastFetchedEpoch: number;
  }>,
): Promise<RawFetchResponse> {
  return new Promise((resolve, reject) => {
    consumer[kGetConnection](broker, (err: Error | null, connection?: Connection) => {
      if (err) return reject(err);
      // Session id 0 and epoch -1: a full fetch that opens no fetch session on the broker.
      const send = api as unknown as (...a: unknown[]) => void;
      send(
        connection,
        maxWaitMs,
        1,
        maxBytes,
        READ_COMMITTED,
        0,
        -1,
        [{ topicId, partitions }],
        [],
        "",
        (e: Error | null, res?: RawFetchResponse) => (e ? reject(e) : resolve(res!)),
      );
    });
  });
}
