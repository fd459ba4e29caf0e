/**
 * The raw Fetch path (src/kafka/raw-fetch.ts, record-set.ts) builds on internals of the pinned
 * Kafka client that no semver promise covers: its per-version request builders, createAPI and
 * the connection's send, its Reader, the symbols that reach a client's APIs and connections, and
 * its table of decompressors. These tests fail, naming what changed, when an upgrade of the
 * client moves any of them; all but the last run without a broker. The requests and responses
 * are written here byte by byte from the grammar beside the code, not by the client.
 */

import { describe, expect, test } from "bun:test";
import * as client from "@platformatic/kafka";
import { AppError } from "../../src/errors.ts";
import { kafkaErrorName, toAppError } from "../../src/kafka/errors.ts";
import { negotiatedFetch, type RawFetchResponse, rawFetch, rawFetchApi } from "../../src/kafka/raw-fetch.ts";
import { decodeRecordSet } from "../../src/kafka/record-set.ts";
import type { RawRecord } from "../../src/kafka/types.ts";
import { kafkaFixture } from "./helpers.ts";

const PINNED = "@platformatic/kafka 2.12.1";
const changed = (what: string) => `${PINNED} changed: ${what}`;

// ---------------------------------------------------------------------------------------------
// Bytes written from the grammar

const int8 = (v: number) => Buffer.from([v & 0xff]);
const int16 = (v: number) => {
  const b = Buffer.alloc(2);
  b.writeInt16BE(v);
  return b;
};
const int32 = (v: number) => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(v);
  return b;
};
const int64 = (v: bigint) => {
  const b = Buffer.alloc(8);
  b.writeBigInt64BE(v);
  return b;
};
function uvarint(v: number): Buffer {
  const out: number[] = [];
  while (v >= 0x80) {
    out.push((v & 0x7f) | 0x80);
    v = Math.floor(v / 128);
  }
  out.push(v);
  return Buffer.from(out);
}
const varint = (v: number) => uvarint(v >= 0 ? v * 2 : -v * 2 - 1);
const uuid = (id: string) => Buffer.from(id.replaceAll("-", ""), "hex");
const compactArray = (items: Buffer[]) => Buffer.concat([uvarint(items.length + 1), ...items]);
const noTags = uvarint(0);
const bytesField = (b: Buffer | null) => (b === null ? varint(-1) : Buffer.concat([varint(b.length), b]));

const TOPIC_ID = "0b3c0a52-5c1d-4e0c-9f3a-2d6f1e8a7b90";

function fetchRequest(version: number): Buffer {
  const partition = Buffer.concat([int32(2), int32(-1), int64(42n), int32(-1), int64(-1n), int32(1 << 20), noTags]);
  return Buffer.concat([
    version < 15 ? int32(-1) : Buffer.alloc(0), // replica_id
    int32(500), // max_wait_ms
    int32(1), // min_bytes
    int32(4 << 20), // max_bytes
    int8(1), // isolation_level READ_COMMITTED
    int32(0), // session_id
    int32(-1), // session_epoch
    compactArray([Buffer.concat([uuid(TOPIC_ID), compactArray([partition]), noTags])]),
    compactArray([]), // forgotten_topics_data
    uvarint(1), // rack_id ""
    noTags,
  ]);
}

interface TestRecord {
  offsetDelta: number;
  timestampDelta: number;
  key: string | null;
  value: string | null;
  headers: Array<[string, string | null]>;
}

function recordBytes(r: TestRecord): Buffer {
  const text = (s: string | null) => (s === null ? null : Buffer.from(s, "utf8"));
  const body = Buffer.concat([
    int8(0),
    varint(r.timestampDelta),
    varint(r.offsetDelta),
    bytesField(text(r.key)),
    bytesField(text(r.value)),
    varint(r.headers.length),
    ...r.headers.map(([k, v]) => Buffer.concat([bytesField(text(k)), bytesField(text(v))])),
  ]);
  return Buffer.concat([varint(body.length), body]);
}

const RECORDS: TestRecord[] = [
  { offsetDelta: 0, timestampDelta: 0, key: null, value: "first", headers: [] },
  { offsetDelta: 1, timestampDelta: 7, key: "k", value: null, headers: [["h", "v"]] },
  { offsetDelta: 2, timestampDelta: 9, key: "é", value: "x".repeat(300), headers: [["a", null]] },
];

/** A record batch with the records above; `compress` turns the record block into a codec's. */
function recordBatch(baseOffset: bigint, baseTimestamp: bigint, attributes: number, compress = (b: Buffer) => b): Buffer {
  const records = compress(Buffer.concat(RECORDS.map(recordBytes)));
  const afterLength = Buffer.concat([
    int32(0), // partitionLeaderEpoch
    int8(2), // magic
    int32(0), // crc: not checked by the decoder
    int16(attributes),
    int32(RECORDS.length - 1), // lastOffsetDelta
    int64(baseTimestamp),
    int64(baseTimestamp + 9n), // maxTimestamp
    int64(-1n), // producerId
    int16(-1), // producerEpoch
    int32(-1), // baseSequence
    int32(RECORDS.length),
    records,
  ]);
  return Buffer.concat([int64(baseOffset), int32(afterLength.length), afterLength]);
}

function fetchResponse(version: number, partitions: Buffer[], errorCode = 0): Buffer {
  // Response tag 0 (node_endpoints, 16 on) and partition tags are there to be skipped.
  const responseTags =
    version >= 16
      ? (() => {
          const endpoints = compactArray([
            Buffer.concat([int32(1), uvarint(10), Buffer.from("localhost"), int32(9092), uvarint(0), noTags]),
          ]);
          return Buffer.concat([uvarint(1), uvarint(0), uvarint(endpoints.length), endpoints]);
        })()
      : noTags;
  return Buffer.concat([
    int32(0), // throttle_time_ms
    int16(errorCode),
    int32(0), // session_id
    compactArray([Buffer.concat([uuid(TOPIC_ID), compactArray(partitions), noTags])]),
    responseTags,
  ]);
}

function fetchPartition(index: number, opts: { errorCode?: number; records: Buffer | null; aborted: boolean }): Buffer {
  const currentLeader = Buffer.concat([int32(1), int32(5)]);
  return Buffer.concat([
    int32(index),
    int16(opts.errorCode ?? 0),
    int64(100n), // high_watermark
    int64(100n), // last_stable_offset
    int64(0n), // log_start_offset
    opts.aborted ? compactArray([Buffer.concat([int64(7n), int64(3n), noTags])]) : uvarint(0),
    int32(-1), // preferred_read_replica
    opts.records === null ? uvarint(0) : Buffer.concat([uvarint(opts.records.length + 1), opts.records]),
    Buffer.concat([uvarint(1), uvarint(1), uvarint(currentLeader.length), currentLeader]), // tag 1: current_leader
  ]);
}

// ---------------------------------------------------------------------------------------------
// Driving the raw path through stand-ins for the client's connection and consumer

interface SendCall {
  apiKey: unknown;
  apiVersion: unknown;
  createPayload: () => { buffers: Buffer[] };
  parse: (correlationId: number, apiKey: number, apiVersion: number, reader: unknown) => unknown;
  requestHeaderTags: unknown;
  responseHeaderTags: unknown;
  callback: (err: Error | null, res?: unknown) => void;
}

/** Runs the raw path's request against a connection that records what it was asked to send. */
async function sendThroughRawPath(version: number): Promise<SendCall> {
  const api = rawFetchApi(version);
  expect(api, `rawFetchApi(${version}) is null: raw-fetch.ts lost Fetch v${version}`).not.toBeNull();
  let call: SendCall | null = null;
  const connection = {
    send(...args: unknown[]) {
      expect(args.length, changed("Connection.send is no longer called with 7 arguments by createAPI")).toBe(7);
      const [apiKey, apiVersion, createPayload, parse, requestHeaderTags, responseHeaderTags, callback] = args;
      call = { apiKey, apiVersion, createPayload, parse, requestHeaderTags, responseHeaderTags, callback } as SendCall;
      call.callback(null, { responses: [] });
    },
  };
  const consumer = {
    [client.kGetConnection]: (broker: unknown, cb: (err: Error | null, connection: unknown) => void) => {
      expect(broker).toEqual({ host: "h", port: 1 });
      cb(null, connection);
    },
  } as unknown as client.Consumer;
  const partitions = [{ partition: 2, fetchOffset: 42n, partitionMaxBytes: 1 << 20, currentLeaderEpoch: -1, lastFetchedEpoch: -1 }];
  await rawFetch(consumer, api!, { host: "h", port: 1 }, 500, 4 << 20, TOPIC_ID, partitions);
  expect(call, changed("createAPI's function no longer calls connection.send")).not.toBeNull();
  return call!;
}

/** Parses `bytes` with the parser the raw path hands to the connection, in three pieces. */
async function parse(version: number, bytes: Buffer): Promise<RawFetchResponse> {
  const call = await sendThroughRawPath(version);
  // Responses arrive as several network reads: the reader's buffer holds them as segments.
  const third = Math.floor(bytes.length / 3);
  const writer = client.Writer.create()
    .append(bytes.subarray(0, third))
    .append(bytes.subarray(third, 2 * third))
    .append(bytes.subarray(2 * third));
  return (await call.parse(0, 1, version, client.Reader.from(writer))) as RawFetchResponse;
}

const plain = (r: RawRecord) => ({
  offset: r.offset,
  timestamp: r.timestamp,
  key: r.key === null ? null : Buffer.from(r.key).toString("utf8"),
  value: r.value === null ? null : Buffer.from(r.value).toString("utf8"),
  headers: r.headers.map((h) => [h.key, h.value === null ? null : Buffer.from(h.value).toString("utf8")]),
});

const expectedRecords = (baseOffset: number, baseTimestamp: number) =>
  RECORDS.map((r) => ({
    offset: baseOffset + r.offsetDelta,
    timestamp: baseTimestamp + r.timestampDelta,
    key: r.key,
    value: r.value,
    headers: r.headers,
  }));

// ---------------------------------------------------------------------------------------------

describe("the pinned client's internals the raw Fetch path uses", () => {
  const exported: Array<[string, unknown, "function" | "symbol"]> = [
    ["createAPI", client.createAPI, "function"],
    ["Reader", client.Reader, "function"],
    ["Reader.from", client.Reader?.from, "function"],
    ["Writer.create", client.Writer?.create, "function"],
    ["ResponseError", client.ResponseError, "function"],
    ["readKnownTaggedFields", client.readKnownTaggedFields, "function"],
    ["kGetApi", client.kGetApi, "symbol"],
    ["kGetConnection", client.kGetConnection, "symbol"],
    ["kGetBootstrapConnection", client.kGetBootstrapConnection, "symbol"],
    ["Connection.prototype.send", client.Connection?.prototype?.send, "function"],
    ["Base.prototype[kGetApi]", client.Base?.prototype?.[client.kGetApi as never], "function"],
    ["Base.prototype[kGetConnection]", client.Base?.prototype?.[client.kGetConnection as never], "function"],
    ["Base.prototype[kGetBootstrapConnection]", client.Base?.prototype?.[client.kGetBootstrapConnection as never], "function"],
    ["connectionsApiChannel.start", client.connectionsApiChannel?.start?.subscribe, "function"],
    ["connectionsApiChannel.asyncStart", client.connectionsApiChannel?.asyncStart?.subscribe, "function"],
    ["connectionsApiChannel.error", client.connectionsApiChannel?.error?.subscribe, "function"],
    ...[13, 14, 15, 16, 17].map((v): [string, unknown, "function"] => [
      `fetchV${v}.createRequest`,
      (client as unknown as Record<string, { createRequest?: unknown }>)[`fetchV${v}`]?.createRequest,
      "function",
    ]),
  ];
  test.each(exported)("%s is still exported", (name, value, type) => {
    expect(typeof value, changed(`${name} is no longer a ${type} (src/kafka reaches into it)`)).toBe(type);
  });

  test("the connection's send takes (apiKey, apiVersion, createPayload, parser, request tags, response tags, callback)", () => {
    expect(client.Connection.prototype.send.length, changed("Connection.prototype.send's parameters")).toBe(7);
  });

  test("the protocol's names and flags the path reads", () => {
    expect(client.protocolAPIsById[1], changed("protocolAPIsById[1] is no longer 'Fetch' (metrics.ts counts by it)")).toBe("Fetch");
    expect(client.IS_CONTROL, changed("IS_CONTROL is no longer batch attribute bit 5")).toBe(1 << 5);
  });

  const codecs: Array<[number, string]> = [
    [1, "gzip"],
    [2, "snappy"],
    [3, "lz4"],
    [4, "zstd"],
  ];
  test.each(codecs)("decompressor %d (%s) is in compressionsAlgorithmsByBitmask and gives back a Buffer", (bitmask, name) => {
    const table = client.compressionsAlgorithmsByBitmask as Record<number, { decompressSync?: unknown; compressSync?: unknown }>;
    const algorithm = table[bitmask];
    expect(typeof algorithm?.decompressSync, changed(`compressionsAlgorithmsByBitmask[${bitmask}] (${name}) has no decompressSync`)).toBe(
      "function",
    );
    expect(algorithm, changed(`compressionsAlgorithmsByBitmask[${bitmask}] is no longer ${name}`)).toBe(
      (client.compressionsAlgorithms as unknown as Record<string, never>)[name],
    );
    const data = Buffer.from("abc".repeat(100));
    const compressed = (algorithm!.compressSync as (b: Buffer) => Buffer)(data);
    const back = (algorithm!.decompressSync as (b: Buffer) => unknown)(compressed);
    expect(Buffer.isBuffer(back), changed(`${name}'s decompressSync no longer answers a Buffer (record-set.ts indexes it)`)).toBe(true);
    expect((back as Buffer).equals(data)).toBe(true);
  });

  test("the Fetch version the broker picks selects the raw API through kGetApi", async () => {
    for (const version of [12, 13, 17, 18]) {
      const consumer = {
        [client.kGetApi]: (name: string, cb: (err: Error | null, api: { version: number }) => void) => {
          expect(name).toBe("Fetch");
          cb(null, { version });
        },
      } as unknown as client.Consumer;
      const api = await negotiatedFetch(consumer, "loupe");
      expect(api?.version ?? null).toBe(version >= 13 && version <= 17 ? version : null);
    }
  });
});

describe("the Fetch request and response against the grammar in raw-fetch.ts", () => {
  for (const version of [13, 14, 15, 16, 17]) {
    test(`v${version}: the request the raw path sends is the grammar's, byte for byte`, async () => {
      const call = await sendThroughRawPath(version);
      expect([call.apiKey, call.apiVersion], changed("createAPI no longer passes the api key and version first")).toEqual([1, version]);
      expect([call.requestHeaderTags, call.responseHeaderTags], changed("createAPI's header tagged-field flags")).toEqual([true, true]);
      const payload = call.createPayload();
      const bytes = Buffer.concat(payload.buffers);
      expect(
        bytes.toString("hex"),
        changed(`fetchV${version}.createRequest no longer writes the Fetch v${version} request of the grammar`),
      ).toBe(fetchRequest(version).toString("hex"));
    });

    test(`v${version}: the raw parser reads the grammar's response, skips tags, and keeps record sets as bytes`, async () => {
      const batch = recordBatch(10n, 1_000n, 0);
      const response = await parse(
        version,
        fetchResponse(version, [
          fetchPartition(0, { records: batch, aborted: true }),
          fetchPartition(1, { records: null, aborted: false }),
        ]),
      );
      expect(response.responses.length).toBe(1);
      const [topic] = response.responses;
      expect(topic!.topicId).toBe(TOPIC_ID);
      const [p0, p1] = topic!.partitions;
      expect(p0).toMatchObject({
        partitionIndex: 0,
        errorCode: 0,
        highWatermark: 100,
        abortedTransactions: [{ producerId: 7n, firstOffset: 3n }],
      });
      expect(p0!.records!.length).toBe(batch.length);
      expect(Buffer.concat(p0!.records!.segments).equals(batch), "the record set's bytes are not the batch that was sent").toBe(true);
      expect(p1).toEqual({ partitionIndex: 1, errorCode: 0, highWatermark: 100, abortedTransactions: null, records: null });

      const out: RawRecord[] = [];
      decodeRecordSet(Buffer.concat(p0!.records!.segments), "t", { partition: 0, next: 0, end: null }, null, out);
      expect(out.map(plain)).toEqual(expectedRecords(10, 1_000));
    });
  }

  test("an error code is a ResponseError that toAppError and the read's retry logic understand", async () => {
    // OFFSET_OUT_OF_RANGE (1) on a partition: reads.ts moves to the new log start on it.
    const err = await parse(17, fetchResponse(17, [fetchPartition(0, { errorCode: 1, records: null, aborted: false })])).catch((e) => e);
    expect(err, changed("ResponseError")).toBeInstanceOf(client.ResponseError);
    expect(kafkaErrorName(err), changed("a ResponseError's error code no longer names the Kafka error")).toBe("OFFSET_OUT_OF_RANGE");
    const app = toAppError(err, "Ctx");
    expect(app).toBeInstanceOf(AppError);
    expect((app.details as { kafkaError: string }).kafkaError).toBe("OFFSET_OUT_OF_RANGE");
    // NOT_LEADER_OR_FOLLOWER (6) at the top level.
    const top = await parse(15, fetchResponse(15, [], 6)).catch((e) => e);
    expect(kafkaErrorName(top)).toBe("NOT_LEADER_OR_FOLLOWER");
  });
});

describe("record batches against the grammar in record-set.ts", () => {
  const codecs: Array<[string, number]> = [
    ["none", 0],
    ["gzip", 1],
    ["snappy", 2],
    ["lz4", 3],
    ["zstd", 4],
  ];
  test.each(codecs)("%s: a batch written from the grammar decodes to its records", (name, bitmask) => {
    const algorithm = (client.compressionsAlgorithms as Record<string, { compressSync(b: Buffer): Buffer }>)[name]!;
    const batch = recordBatch(5n, 2_000n, bitmask, bitmask === 0 ? undefined : (b) => algorithm.compressSync(b));
    const out: RawRecord[] = [];
    const stats = decodeRecordSet(batch, "t", { partition: 3, next: 6, end: null }, null, out);
    expect(stats).toEqual({ records: 3, firstOffset: 5, lastOffset: 7 });
    expect(out.map(plain)).toEqual(expectedRecords(5, 2_000).slice(1));
    expect(out[0]).toMatchObject({ topic: "t", partition: 3, timestampType: "CreateTime" });
  });

  test("LogAppendTime batches take the batch's max timestamp; control batches are no records", () => {
    const out: RawRecord[] = [];
    decodeRecordSet(recordBatch(0n, 2_000n, 1 << 3), "t", { partition: 0, next: 0, end: null }, null, out);
    expect(out.map((r) => [r.timestamp, r.timestampType])).toEqual(RECORDS.map(() => [2_009, "LogAppendTime"]));
    const cursor = { partition: 0, next: 0, end: null };
    const control: RawRecord[] = [];
    expect(decodeRecordSet(recordBatch(0n, 2_000n, 1 << 5), "t", cursor, null, control).records).toBe(0);
    expect([control.length, cursor.next]).toEqual([0, 3]);
  });
});

describe("against the broker", () => {
  const { kafka, topic } = kafkaFixture();

  test("the broker's Fetch version has a raw API, and a raw Fetch of an empty partition answers its high watermark", async () => {
    const name = await topic("raw-fetch");
    const consumer = new client.Consumer({
      clientId: "loupe-test",
      bootstrapBrokers: kafka.config.bootstrapServers,
      groupId: "loupe-test-raw",
    });
    try {
      const metadata = await consumer.metadata({ topics: [name] });
      const api = await negotiatedFetch(consumer, "loupe");
      expect(api, "the broker's Fetch version is outside 13-17: the raw path would not be used").not.toBeNull();
      const t = metadata.topics.get(name)!;
      const broker = metadata.brokers.get(t.partitions[0]!.leader)!;
      const partitions = [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: 1 << 20, currentLeaderEpoch: -1, lastFetchedEpoch: -1 }];
      const response = await rawFetch(consumer, api!, broker, 10, 1 << 20, t.id, partitions);
      expect(response.responses[0]!.topicId).toBe(t.id);
      expect(response.responses[0]!.partitions).toEqual([
        // READ_COMMITTED: the broker lists aborted transactions, here none.
        { partitionIndex: 0, errorCode: 0, highWatermark: 0, abortedTransactions: [], records: null },
      ]);
    } finally {
      await consumer.close(true);
    }
  });
});
