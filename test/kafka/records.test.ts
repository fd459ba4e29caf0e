import { describe, expect, test } from "bun:test";
import { collect, eventually, kafkaFixture, rejection, text } from "./helpers.ts";

const { kafka, topic } = kafkaFixture();
/** Fetch requests this cluster has sent so far. */
const fetches = () => kafka.stats().byApi.Fetch ?? 0;

describe("produce and list offsets", () => {
  test("produce answers each record's partition and offset, in input order", async () => {
    const name = await topic("produce", 3);
    const produced = await kafka.writes.produce(
      name,
      Array.from({ length: 9 }, (_, i) => ({ partition: i % 3, key: `k${i}`, value: `v${i}` })),
    );
    expect(produced).toEqual(Array.from({ length: 9 }, (_, i) => ({ topic: name, partition: i % 3, offset: Math.floor(i / 3) })));

    const again = await kafka.writes.produce(name, [{ partition: 1, value: "late" }]);
    expect(again).toEqual([{ topic: name, partition: 1, offset: 3 }]);

    const refs = [0, 1, 2].map((partition) => ({ topic: name, partition }));
    expect((await kafka.offsets.list(refs, "earliest")).map((o) => o.offset)).toEqual([0, 0, 0]);
    expect((await kafka.offsets.list(refs, "latest")).map((o) => o.offset)).toEqual([3, 4, 3]);
    expect(await kafka.offsets.bounds([name])).toEqual([
      { topic: name, partition: 0, earliest: 0, latest: 3 },
      { topic: name, partition: 1, earliest: 0, latest: 4 },
      { topic: name, partition: 2, earliest: 0, latest: 3 },
    ]);
  });

  test("keyed records land where Java's partitioner puts them", async () => {
    const name = await topic("keys", 4);
    // Partitions from org.apache.kafka.common.utils.Utils: toPositive(murmur2(key)) % 4.
    const produced = await kafka.writes.produce(
      name,
      ["k0", "k3", "bob", "k0", "carol"].map((key) => ({ key, value: key })),
    );
    expect(produced.map((p) => p.partition)).toEqual([1, 0, 2, 1, 2]);
    expect(produced.map((p) => p.offset)).toEqual([0, 0, 0, 1, 1]);
  });

  // Regression: the client resends a whole Produce request when one partition of it fails,
  // which duplicated the records of the other partitions on a topic created a moment before.
  test("producing right after creating a topic writes every record once", async () => {
    for (let round = 0; round < 3; round++) {
      const name = await topic("fresh", 6);
      const produced = await kafka.writes.produce(
        name,
        Array.from({ length: 12 }, (_, i) => ({ partition: i % 6, value: `v${i}` })),
      );
      expect(produced.map((p) => p.offset)).toEqual(Array.from({ length: 12 }, (_, i) => Math.floor(i / 6)));
      const latest = await kafka.offsets.list(
        [0, 1, 2, 3, 4, 5].map((partition) => ({ topic: name, partition })),
        "latest",
      );
      expect(latest.map((o) => o.offset)).toEqual([2, 2, 2, 2, 2, 2]);
    }
  }, 15_000);

  test("listOffsets by timestamp finds the first record at or after it", async () => {
    const name = await topic("times");
    const base = Date.now() - 60_000;
    await kafka.writes.produce(
      name,
      [0, 1, 2, 3].map((i) => ({ value: `v${i}`, timestamp: base + i * 1000, partition: 0 })),
    );
    const [at] = await kafka.offsets.list([{ topic: name, partition: 0 }], base + 1500);
    expect(at).toEqual({ topic: name, partition: 0, offset: 2, timestamp: base + 2000 });
    const [after] = await kafka.offsets.list([{ topic: name, partition: 0 }], base + 10_000);
    expect(after!.offset).toBe(-1);
  });

  test("a partition out of range is BAD_REQUEST", async () => {
    const name = await topic("range", 2);
    const err = await rejection(kafka.writes.produce(name, [{ partition: 5, value: "x" }]));
    expect(err.code).toBe("BAD_REQUEST");
    expect(err.message).toBe(`Cannot write to topic '${name}': record 0 names partition 5, but the topic has 2`);
  });
});

describe("consume", () => {
  test("reads exactly the range [from, to) of each partition, with keys, headers and timestamps", async () => {
    const name = await topic("range-read", 2);
    const ts = Date.now() - 5_000;
    await kafka.writes.produce(
      name,
      Array.from({ length: 20 }, (_, i) => ({
        partition: i % 2,
        key: i === 3 ? null : `k${i}`,
        value: i === 5 ? null : `v${i}`,
        headers: { n: String(i) },
        timestamp: ts + i,
      })),
    );
    const records = await collect(
      kafka.reads.records({
        topic: name,
        partitions: [
          { partition: 0, from: 2, to: 7 },
          { partition: 1, from: 1, to: 3 },
        ],
      }),
    );
    const p0 = records.filter((r) => r.partition === 0);
    const p1 = records.filter((r) => r.partition === 1);
    expect(p0.map((r) => r.offset)).toEqual([2, 3, 4, 5, 6]);
    expect(p0.map((r) => text(r.value))).toEqual(["v4", "v6", "v8", "v10", "v12"]);
    expect(p1.map((r) => [r.offset, text(r.key), text(r.value)])).toEqual([
      [1, null, "v3"],
      [2, "k5", null],
    ]);
    expect(p0[0]).toMatchObject({ topic: name, partition: 0, timestamp: ts + 4, timestampType: "CreateTime" });
    expect(p0[0]!.headers.map((h) => [h.key, text(h.value)])).toEqual([["n", "4"]]);
  });

  // Loupe decodes record batches itself (src/kafka/record-set.ts); the client's decoder is the
  // reference. The broker recompresses to the topic's compression.type, so every codec is read.
  for (const codec of ["uncompressed", "gzip", "snappy", "lz4", "zstd"]) {
    test(`Loupe's record decoder reads what the client's reads: ${codec} batches, in batches and one by one`, async () => {
      const name = await topic(`codec-${codec}`, 2, { "compression.type": codec });
      const ts = Date.now() - 60_000;
      for (let round = 0; round < 3; round++) {
        await kafka.writes.produce(
          name,
          Array.from({ length: 40 }, (_, j) => {
            const i = round * 40 + j;
            return {
              partition: i % 2,
              key: i % 7 === 0 ? null : `k${i}`,
              value: i % 11 === 0 ? null : `{"i":${i},"s":"${"é".repeat(i % 5)}${"x".repeat(i * 13)}"}`,
              headers: (i % 3 === 0 ? {} : { a: `h${i}`, b: "" }) as Record<string, string>,
              timestamp: ts + i * 1_000,
            };
          }),
        );
      }
      const plain = (r: {
        partition: number;
        offset: number;
        timestamp: number;
        timestampType: string;
        key: Uint8Array | null;
        value: Uint8Array | null;
        headers: Array<{ key: string; value: Uint8Array | null }>;
      }) => ({
        partition: r.partition,
        offset: r.offset,
        timestamp: r.timestamp,
        timestampType: r.timestampType,
        key: text(r.key),
        value: text(r.value),
        headers: r.headers.map((h) => [h.key, text(h.value)]),
      });
      const ranges = [
        { partition: 0, from: 0 },
        { partition: 1, from: 7, to: 50 },
      ];
      const ours = (await collect(kafka.reads.batches({ topic: name, partitions: ranges, maxBytes: 8_000 }))).flat().map(plain);
      const client = (await collect(kafka.reads.records({ topic: name, partitions: ranges, recordDecoder: "client" }))).map(plain);
      // Reused buffers: each batch is read before the next is pulled, as the SQL executor does.
      const reused: ReturnType<typeof plain>[] = [];
      for await (const batch of kafka.reads.batches({ topic: name, partitions: ranges, reuseBuffers: true }))
        reused.push(...batch.map(plain));
      expect(ours.length).toBe(60 + 43);
      expect(ours).toEqual(client);
      expect(reused).toEqual(client);
      expect(ours.filter((r) => r.partition === 1).map((r) => r.offset)).toEqual(Array.from({ length: 43 }, (_, i) => 7 + i));
      expect(ours.find((r) => r.partition === 0 && r.offset === 3)).toEqual({
        partition: 0,
        offset: 3,
        timestamp: ts + 6_000,
        timestampType: "CreateTime",
        key: "k6",
        value: `{"i":6,"s":"é${"x".repeat(78)}"}`,
        headers: [],
      });
      expect(ours.find((r) => r.partition === 0 && r.offset === 0)!.key).toBeNull();
      expect(ours.find((r) => r.partition === 1 && r.offset === 17)!.headers).toEqual([
        ["a", "h35"],
        ["b", ""],
      ]);
    });
  }

  test("without an end it reads to the high watermark seen at the start, then ends", async () => {
    const name = await topic("to-end");
    await kafka.writes.produce(
      name,
      Array.from({ length: 50 }, (_, i) => ({ value: `v${i}` })),
    );
    const records = await collect(kafka.reads.records({ topic: name, partitions: [{ partition: 0, from: 0 }] }));
    expect(records.map((r) => r.offset)).toEqual(Array.from({ length: 50 }, (_, i) => i));
    // An end past the last record does not wait for records that do not exist.
    const past = await collect(kafka.reads.records({ topic: name, partitions: [{ partition: 0, from: 45, to: 1000 }] }));
    expect(past.map((r) => r.offset)).toEqual([45, 46, 47, 48, 49]);
    expect(await collect(kafka.reads.records({ topic: name, partitions: [{ partition: 0, from: 50 }] }))).toEqual([]);
  });

  test("small fetches still read the whole range", async () => {
    const name = await topic("small-fetch");
    const big = "x".repeat(10_000);
    await kafka.writes.produce(
      name,
      Array.from({ length: 30 }, () => ({ value: big })),
    );
    const records = await collect(kafka.reads.records({ topic: name, partitions: [{ partition: 0, from: 0 }], maxBytes: 25_000 }));
    expect(records.length).toBe(30);
    expect(records.at(-1)!.offset).toBe(29);
  });

  test("deleteRecords moves the log start; reads below it start at the new start", async () => {
    const name = await topic("delete-records");
    await kafka.writes.produce(
      name,
      Array.from({ length: 10 }, (_, i) => ({ value: `v${i}` })),
    );
    expect(await kafka.offsets.deleteRecords(name, 0, 4)).toEqual({ topic: name, partition: 0, lowWatermark: 4 });
    expect((await kafka.offsets.list([{ topic: name, partition: 0 }], "earliest"))[0]!.offset).toBe(4);
    const records = await collect(kafka.reads.records({ topic: name, partitions: [{ partition: 0, from: 0 }] }));
    expect(records.map((r) => r.offset)).toEqual([4, 5, 6, 7, 8, 9]);

    const beyond = await rejection(kafka.offsets.deleteRecords(name, 0, 11));
    expect(beyond.code).toBe("BAD_REQUEST");
    expect((beyond.details as { kafkaError: string }).kafkaError).toBe("OFFSET_OUT_OF_RANGE");
    expect((await rejection(kafka.offsets.deleteRecords(name, -1, 0))).code).toBe("BAD_REQUEST");
    expect((await rejection(kafka.offsets.deleteRecords(name, 0, -2))).code).toBe("BAD_REQUEST");

    expect(await kafka.offsets.deleteRecords(name, 0, -1)).toEqual({ topic: name, partition: 0, lowWatermark: 10 });
  });

  test("aborting ends the iteration and closes the connection within a second", async () => {
    const name = await topic("abort");
    await kafka.writes.produce(name, [{ value: "only" }]);
    const controller = new AbortController();
    const seen: number[] = [];
    let fetchesAtRecord = Number.POSITIVE_INFINITY;
    const reading = (async () => {
      for await (const r of kafka.reads.records({
        topic: name,
        partitions: [{ partition: 0, from: 0 }],
        signal: controller.signal,
        follow: true,
        maxWaitMs: 5_000,
      })) {
        seen.push(r.offset);
        fetchesAtRecord = fetches();
      }
    })();
    // The read is parked in a long poll at the end of the partition once a Fetch went out
    // after the only record arrived.
    expect(await eventually(async () => fetches() > fetchesAtRecord)).toBe(true);
    expect(kafka.stats().openReads).toBe(1);
    const t0 = performance.now();
    controller.abort();
    await reading;
    const ended = performance.now() - t0;
    expect(ended).toBeLessThan(1_000);
    expect(kafka.stats().openReads).toBe(0);
    expect(seen).toEqual([0]);
  });

  test("follow waits for new records up to the end", async () => {
    const name = await topic("follow");
    const before = fetches();
    const reading = collect(
      kafka.reads.records({ topic: name, partitions: [{ partition: 0, from: 0, to: 3 }], follow: true, maxWaitMs: 200 }),
    );
    // Produce once the read is waiting at the end of the empty partition.
    expect(await eventually(async () => fetches() > before)).toBe(true);
    await kafka.writes.produce(name, [{ value: "a" }, { value: "b" }, { value: "c" }, { value: "d" }]);
    const records = await reading;
    expect(records.map((r) => text(r.value))).toEqual(["a", "b", "c"]);
  });

  test("bad ranges and unknown partitions are refused", async () => {
    const name = await topic("bad-range", 2);
    const err = await rejection(collect(kafka.reads.records({ topic: name, partitions: [{ partition: 0, from: 5, to: 2 }] })));
    expect(err.code).toBe("BAD_REQUEST");
    expect(err.message).toBe("Invalid end offset 2 for partition 0: it must be at least the start 5");
    const missing = await rejection(collect(kafka.reads.records({ topic: name, partitions: [{ partition: 7, from: 0 }] })));
    expect(missing.code).toBe("NOT_FOUND");
    expect(missing.message).toBe(`Cannot read topic '${name}': partition 7 does not exist (the topic has 2)`);
    const noTopic = await rejection(collect(kafka.reads.records({ topic: `${name}-nope`, partitions: [{ partition: 0, from: 0 }] })));
    expect(noTopic.code).toBe("NOT_FOUND");
    expect(kafka.stats().openReads).toBe(0);
  });
});

describe("internal topics", () => {
  // Regression: the client's listOffsets threw outside its promise for __consumer_offsets,
  // which ended the whole process.
  test("listOffsets on __consumer_offsets answers -1 instead of crashing", async () => {
    const got = await kafka.offsets.list([{ topic: "__consumer_offsets", partition: 0 }], "latest");
    expect(got).toEqual([{ topic: "__consumer_offsets", partition: 0, offset: -1, timestamp: -1 }]);
  });
});
