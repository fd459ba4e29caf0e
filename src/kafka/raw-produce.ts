/**
 * Produce (versions 3 to 11) of record batches already encoded (txn-output.ts): the client's
 * own Produce encodes each record through several intermediate buffers, which was a fifth of a
 * processor's time. The response is parsed by the client's parser of the same version.
 *
 * Wire grammar (Kafka's message specs; flexible from version 9: COMPACT_ strings, arrays and
 * records, and a TAG_BUFFER after each structure):
 *
 *   Produce Request (3-11) => transactional_id acks timeout_ms [topic_data] (TAG_BUFFER)
 *     transactional_id => NULLABLE_STRING
 *     acks => INT16                       -1: every in-sync replica
 *     timeout_ms => INT32
 *     topic_data => name [partition_data] (TAG_BUFFER)
 *       name => STRING
 *       partition_data => index records (TAG_BUFFER)
 *         index => INT32
 *         records => RECORDS              INT32 length (COMPACT: unsigned varint length + 1),
 *                                         then exactly one record batch (an idempotent
 *                                         producer's request holds one per partition)
 */
import {
  type Broker,
  type Connection,
  createAPI,
  kGetApi,
  kGetConnection,
  type Producer,
  produceV3,
  produceV4,
  produceV5,
  produceV6,
  produceV7,
  produceV8,
  produceV9,
  produceV10,
  produceV11,
  Writer,
} from "@platformatic/kafka";

export interface ProducePartition {
  partition: number;
  batch: Buffer;
}

export interface ProduceTopic {
  name: string;
  partitions: ProducePartition[];
}

const PARSERS: Record<number, typeof produceV9.parseResponse> = {
  3: produceV3.parseResponse,
  4: produceV4.parseResponse,
  5: produceV5.parseResponse,
  6: produceV6.parseResponse,
  7: produceV7.parseResponse,
  8: produceV8.parseResponse,
  9: produceV9.parseResponse,
  10: produceV10.parseResponse,
  11: produceV11.parseResponse,
};

function requestOf(flexible: boolean) {
  return (transactionalId: string | null, acks: number, timeoutMs: number, topics: ProduceTopic[]): Writer => {
    const w = Writer.create().appendString(transactionalId, flexible).appendInt16(acks).appendInt32(timeoutMs);
    w.appendArray(
      topics,
      (w: Writer, t: ProduceTopic) => {
        w.appendString(t.name, flexible).appendArray(
          t.partitions,
          (w: Writer, p: ProducePartition) => {
            w.appendInt32(p.partition);
            if (flexible) w.appendUnsignedVarInt(p.batch.length + 1);
            else w.appendInt32(p.batch.length);
            w.append(p.batch);
          },
          flexible,
          flexible,
        );
      },
      flexible,
      flexible,
    );
    if (flexible) w.appendTaggedFields();
    return w;
  };
}

export type ProduceApi = ReturnType<typeof createAPI>;
const apis = new Map<number, ProduceApi>();

/** The raw Produce for a version the broker chose, or null outside 3 to 11. */
export function rawProduceApi(version: number): ProduceApi | null {
  const parse = PARSERS[version];
  if (!parse) return null;
  let api = apis.get(version);
  if (!api) {
    const flexible = version >= 9;
    api = createAPI(0, version, requestOf(flexible), parse, flexible, flexible);
    apis.set(version, api);
  }
  return api;
}

/** The raw Produce at the version the producer negotiated with the cluster. */
export function negotiatedProduce(producer: Producer): Promise<ProduceApi> {
  return new Promise((resolve, reject) => {
    producer[kGetApi]("Produce", (err: Error | null, api?: { version: number }) => {
      if (err) return reject(err);
      const raw = rawProduceApi(api!.version);
      if (raw === null) return reject(new Error(`Produce version ${api!.version} is not supported`));
      resolve(raw);
    });
  });
}

/** One Produce to `broker` on the producer's connection to it; rejects with the client's ResponseError. */
export function rawProduce(
  producer: Producer,
  api: ProduceApi,
  broker: Broker,
  transactionalId: string | null,
  acks: number,
  timeoutMs: number,
  topics: ProduceTopic[],
): Promise<void> {
  return new Promise((resolve, reject) => {
    producer[kGetConnection](broker, (err: Error | null, connection?: Connection) => {
      if (err) return reject(err);
      const send = api as unknown as (...a: unknown[]) => void;
      send(connection, transactionalId, acks, timeoutMs, topics, (e: Error | null) => (e ? reject(e) : resolve()));
    });
  });
}
