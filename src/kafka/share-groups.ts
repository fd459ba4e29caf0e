/**
 * Kafka 4 share groups (KIP-932): list, describe, their start offsets and lag, changing and
 * deleting start offsets. The Kafka client knows these APIs' keys but has no codecs for them,
 * so the requests are written here with its own Writer and Reader (flexible versions: compact
 * strings and arrays, a tagged-field section after every struct) and sent to each group's
 * coordinator. The grammars below are those of Kafka's `common/message/*.json` (4.3).
 * Deleting a share group is the ordinary DeleteGroups (groups.ts); its `share.*` configs are
 * the GROUP config resource (configs.ts).
 */

import {
  type Broker,
  type Connection,
  FindCoordinatorKeyTypes,
  kGetConnection,
  kListApis,
  type Reader,
  ResponseError,
  Writer,
} from "@platformatic/kafka";
import { AppError } from "../errors.ts";
import { byTopic, num } from "./client.ts";
import type { KafkaConnection } from "./connection.ts";
import { metadataWithErrors } from "./describe-cluster.ts";
import type { OffsetOps } from "./offsets.ts";
import type { ShareGroupDescription, ShareGroupSummary, ShareStartOffset, TopicPartitionRef } from "./types.ts";

/** The versions Loupe speaks of each API; the newest one the broker speaks too is sent. */
const APIS = {
  ShareGroupDescribe: { key: 77, min: 1, max: 1 },
  DescribeShareGroupOffsets: { key: 90, min: 0, max: 1 },
  AlterShareGroupOffsets: { key: 91, min: 0, max: 0 },
  DeleteShareGroupOffsets: { key: 92, min: 0, max: 0 },
} as const;
type ShareApi = keyof typeof APIS;

/** Kafka's GROUP_ID_NOT_FOUND: a group that does not exist, or is not a share group. */
const GROUP_ID_NOT_FOUND = 69;

/** Throws the client's ResponseError (toAppError maps its codes) when any of `errors` is set. */
function check(api: ShareApi, version: number, errors: Record<string, [number, string | null]>, response: unknown): void {
  const failed = Object.entries(errors).filter(([, [code]]) => code !== 0);
  if (failed.length) throw new ResponseError(APIS[api].key, version, Object.fromEntries(failed), response);
}

/*
  ShareGroupDescribe Request (Version: 1) => [group_ids] include_authorized_operations TAG_BUFFER
    group_ids => COMPACT_STRING
    include_authorized_operations => BOOLEAN
  ShareGroupDescribe Response (Version: 1) => throttle_time_ms [groups] TAG_BUFFER
    groups => error_code error_message group_id group_state group_epoch assignment_epoch assignor_name
              [members] authorized_operations TAG_BUFFER
      members => member_id rack_id member_epoch client_id client_host [subscribed_topic_names] assignment TAG_BUFFER
        rack_id => COMPACT_NULLABLE_STRING
        assignment => [topic_partitions] TAG_BUFFER
          topic_partitions => topic_id topic_name [partitions] TAG_BUFFER
*/
function parseDescribe(r: Reader, version: number): ShareGroupDescription[] {
  r.readInt32();
  const errors: Record<string, [number, string | null]> = {};
  const groups = r.readArray((g) => {
    const errorCode = g.readInt16();
    const errorMessage = g.readNullableString();
    const groupId = g.readString();
    const state = g.readString();
    const groupEpoch = g.readInt32();
    const assignmentEpoch = g.readInt32();
    const assignor = g.readString();
    const members = g.readArray((m) => {
      const memberId = m.readString();
      const rackId = m.readNullableString();
      const memberEpoch = m.readInt32();
      const clientId = m.readString();
      const host = m.readString();
      const subscribedTopics = m.readArray((s) => s.readString(), true, false);
      const assignments = m.readArray((t) => {
        t.readUUID();
        const topic = t.readString();
        return t.readArray((p) => p.readInt32(), true, false).map((partition) => ({ topic, partition }));
      });
      m.readTaggedFields();
      return { memberId, rackId, memberEpoch, clientId, host, subscribedTopics, assignments: assignments.flat() };
    });
    g.readInt32();
    if (errorCode === GROUP_ID_NOT_FOUND) return { groupId, state: "Dead", groupEpoch: -1, assignmentEpoch: -1, assignor: "", members: [] };
    if (errorCode !== 0) errors[`/groups/${groupId}`] = [errorCode, errorMessage];
    return { groupId, state, groupEpoch, assignmentEpoch, assignor, members };
  });
  r.readTaggedFields();
  check("ShareGroupDescribe", version, errors, groups);
  return groups;
}

/*
  DescribeShareGroupOffsets Request (Version: 0-1) => [groups] TAG_BUFFER
    groups => group_id [topics] TAG_BUFFER          topics: COMPACT_NULLABLE_ARRAY, null = all
      topics => topic_name [partitions] TAG_BUFFER
  DescribeShareGroupOffsets Response (Version: 0-1) => throttle_time_ms [groups] TAG_BUFFER
    groups => group_id [topics] error_code error_message TAG_BUFFER
      topics => topic_name topic_id [partitions] TAG_BUFFER
        partitions => partition_index start_offset leader_epoch lag(v1+) error_code error_message TAG_BUFFER
          start_offset => INT64 (-1: not initialised yet)
          lag => INT64 (-1: unknown)
*/
function parseOffsets(r: Reader, version: number): Map<string, ShareStartOffset[]> {
  r.readInt32();
  const errors: Record<string, [number, string | null]> = {};
  const out = new Map<string, ShareStartOffset[]>();
  r.readArray((g) => {
    const groupId = g.readString();
    const offsets = g.readArray((t) => {
      const topic = t.readString();
      t.readUUID();
      return t.readArray((p) => {
        const partition = p.readInt32();
        const start = num(p.readInt64());
        p.readInt32();
        const lag = version >= 1 ? num(p.readInt64()) : -1;
        const errorCode = p.readInt16();
        p.readNullableString();
        return { topic, partition, startOffset: start >= 0 ? start : null, lag: lag >= 0 ? lag : null, errorCode };
      });
    });
    const errorCode = g.readInt16();
    const errorMessage = g.readNullableString();
    if (errorCode !== 0 && errorCode !== GROUP_ID_NOT_FOUND) errors[`/groups/${groupId}`] = [errorCode, errorMessage];
    // A partition the share coordinator cannot answer for is left out, as a partition without a commit is for consumer groups.
    const list = offsets.flat().filter((o) => o.errorCode === 0);
    out.set(
      groupId,
      list.map(({ errorCode: _, ...o }) => o).sort((a, b) => a.topic.localeCompare(b.topic) || a.partition - b.partition),
    );
  });
  r.readTaggedFields();
  check("DescribeShareGroupOffsets", version, errors, out);
  return out;
}

/*
  AlterShareGroupOffsets Request (Version: 0) => group_id [topics] TAG_BUFFER
    topics => topic_name [partitions] TAG_BUFFER
      partitions => partition_index start_offset TAG_BUFFER
  AlterShareGroupOffsets Response (Version: 0) => throttle_time_ms error_code error_message [responses] TAG_BUFFER
    responses => topic_name topic_id [partitions] TAG_BUFFER
      partitions => partition_index error_code error_message TAG_BUFFER
*/
function parseAlter(r: Reader, version: number): void {
  r.readInt32();
  const errors: Record<string, [number, string | null]> = { "/": [r.readInt16(), r.readNullableString()] };
  r.readArray((t) => {
    const topic = t.readString();
    t.readUUID();
    t.readArray((p) => {
      const partition = p.readInt32();
      errors[`/${topic}/${partition}`] = [p.readInt16(), p.readNullableString()];
    });
  });
  r.readTaggedFields();
  check("AlterShareGroupOffsets", version, errors, null);
}

/*
  DeleteShareGroupOffsets Request (Version: 0) => group_id [topics] TAG_BUFFER
    topics => topic_name TAG_BUFFER
  DeleteShareGroupOffsets Response (Version: 0) => throttle_time_ms error_code error_message [responses] TAG_BUFFER
    responses => topic_name topic_id error_code error_message TAG_BUFFER
*/
function parseDelete(r: Reader, version: number): void {
  r.readInt32();
  const errors: Record<string, [number, string | null]> = { "/": [r.readInt16(), r.readNullableString()] };
  r.readArray((t) => {
    const topic = t.readString();
    t.readUUID();
    errors[`/${topic}`] = [t.readInt16(), t.readNullableString()];
  });
  r.readTaggedFields();
  check("DeleteShareGroupOffsets", version, errors, null);
}

export class ShareGroupOps {
  readonly #conn: KafkaConnection;
  readonly #offsets: OffsetOps;
  /** The broker's version range of each API, from one ApiVersions answer. */
  #versions: Promise<Map<number, [number, number]>> | null = null;

  constructor(conn: KafkaConnection, offsets: OffsetOps) {
    this.#conn = conn;
    this.#offsets = offsets;
  }

  list(): Promise<ShareGroupSummary[]> {
    return this.#conn.call("Cannot list share groups", async () => {
      const groups = await this.#conn.admin.listGroups({ types: ["share"] });
      return (
        [...groups.values()]
          // A broker before ListGroups v5 ignores the types filter: only what says "share" is one.
          .filter((g) => g.groupType === "share")
          .map((g) => ({ groupId: g.id, state: g.state }))
          .sort((a, b) => a.groupId.localeCompare(b.groupId))
      );
    });
  }

  /** In the order asked; a group that does not exist (or is no share group) comes back "Dead". */
  describe(ids: string[]): Promise<ShareGroupDescription[]> {
    return this.#conn.call("Cannot describe share groups", async () => {
      const byId = new Map<string, ShareGroupDescription>();
      await this.#perCoordinator(ids, async (broker, asked) => {
        const write = (w: Writer) =>
          w
            .appendArray(asked, (x, id) => x.appendString(id), true, false)
            .appendBoolean(false)
            .appendTaggedFields();
        for (const d of await this.#send(broker, "ShareGroupDescribe", write, parseDescribe)) byId.set(d.groupId, d);
      });
      return ids.map(
        (id) => byId.get(id) ?? { groupId: id, state: "Dead", groupEpoch: -1, assignmentEpoch: -1, assignor: "", members: [] },
      );
    });
  }

  /**
   * Start offsets of many groups, each partition with its lag: the broker's own figure (records
   * from the start offset to the end not yet acknowledged, Kafka 4.2+), else end offset minus
   * start offset. A partition whose start offset is not initialised yet has both null.
   */
  startOffsets(ids: string[]): Promise<Map<string, Array<ShareStartOffset & { endOffset: number | null }>>> {
    return this.#conn.call("Cannot describe share group offsets", async () => {
      const out = new Map<string, ShareStartOffset[]>(ids.map((id) => [id, []]));
      await this.#perCoordinator(ids, async (broker, asked) => {
        const write = (w: Writer) =>
          w.appendArray(asked, (x, id) => x.appendString(id).appendArray(null, () => {}), true, true).appendTaggedFields();
        for (const [id, list] of await this.#send(broker, "DescribeShareGroupOffsets", write, parseOffsets)) out.set(id, list);
      });
      const refs = new Map<string, TopicPartitionRef>();
      for (const list of out.values()) for (const o of list) refs.set(`${o.topic}\u0000${o.partition}`, o);
      const ends = await this.#ends([...refs.values()].map(({ topic, partition }) => ({ topic, partition })));
      const result = new Map<string, Array<ShareStartOffset & { endOffset: number | null }>>();
      for (const [id, list] of out)
        result.set(
          id,
          list.map((o) => {
            const endOffset = ends.get(`${o.topic}\u0000${o.partition}`) ?? null;
            const lag = o.startOffset === null ? null : (o.lag ?? (endOffset === null ? null : Math.max(0, endOffset - o.startOffset)));
            return { ...o, lag, endOffset };
          }),
        );
      return result;
    });
  }

  /**
   * End offsets by partition key. A group keeps start offsets on a topic deleted since, which
   * would fail the whole ListOffsets: the topics that are gone are left out (one Metadata request).
   */
  async #ends(refs: TopicPartitionRef[]): Promise<Map<string, number>> {
    const ends = new Map<string, number>();
    if (refs.length === 0) return ends;
    // Asked first, not after a failed ListOffsets: the client retries an unknown topic for about
    // 2 s before it gives up, which every lag snapshot (/metrics, the overview) paid while one
    // share group kept start offsets on a deleted topic.
    const present = new Set((await metadataWithErrors(this.#conn)).topics.filter((t) => t.errorCode === 0).map((t) => t.name));
    const left = refs.filter((r) => present.has(r.topic ?? ""));
    const listed = left.length ? await this.#offsets.list(left, "latest") : [];
    for (const o of listed) if (o.offset >= 0) ends.set(`${o.topic}\u0000${o.partition}`, o.offset);
    return ends;
  }

  /** Every share group's partitions whose lag is known, sorted by group, topic, partition (for /metrics). */
  async lag(): Promise<Array<TopicPartitionRef & { group: string; lag: number }>> {
    const ids = (await this.list()).map((g) => g.groupId);
    const out: Array<TopicPartitionRef & { group: string; lag: number }> = [];
    for (const [group, list] of await this.startOffsets(ids))
      for (const o of list) if (o.lag !== null) out.push({ group, topic: o.topic, partition: o.partition, lag: o.lag });
    return out.sort((a, b) => a.group.localeCompare(b.group) || a.topic.localeCompare(b.topic) || a.partition - b.partition);
  }

  /** Sets start offsets; Kafka refuses (NON_EMPTY_GROUP) while the group has members. Creates an unknown group. */
  alterStartOffsets(groupId: string, offsets: Array<TopicPartitionRef & { offset: number }>): Promise<void> {
    return this.#conn.call(`Cannot change the start offsets of share group '${groupId}'`, async () => {
      if (offsets.length === 0) return;
      for (const o of offsets)
        if (!Number.isSafeInteger(o.offset) || o.offset < 0) throw new AppError("BAD_REQUEST", `Invalid offset ${o.offset}`);
      const write = (w: Writer) =>
        w
          .appendString(groupId)
          .appendArray([...byTopic(offsets)], (x, [topic, list]) =>
            x.appendString(topic).appendArray(list, (y, o) => y.appendInt32(o.partition).appendInt64(BigInt(o.offset))),
          )
          .appendTaggedFields();
      await this.#perCoordinator([groupId], (broker) => this.#send(broker, "AlterShareGroupOffsets", write, parseAlter));
    });
  }

  /** Drops the group's start offsets on the topics named: the group no longer consumes them. */
  deleteStartOffsets(groupId: string, topics: string[]): Promise<void> {
    return this.#conn.call(`Cannot delete the start offsets of share group '${groupId}'`, async () => {
      if (topics.length === 0) return;
      const write = (w: Writer) =>
        w
          .appendString(groupId)
          .appendArray(topics, (x, t) => x.appendString(t))
          .appendTaggedFields();
      await this.#perCoordinator([groupId], (broker) => this.#send(broker, "DeleteShareGroupOffsets", write, parseDelete));
    });
  }

  /** Runs `fn` once per coordinator broker with the groups it coordinates. */
  async #perCoordinator(ids: string[], fn: (broker: Broker, ids: string[]) => Promise<unknown>): Promise<void> {
    if (ids.length === 0) return;
    const found = await this.#conn.admin.findCoordinator({ keyType: FindCoordinatorKeyTypes.GROUP, keys: [...new Set(ids)] });
    const byBroker = new Map<string, { broker: Broker; ids: string[] }>();
    for (const c of found) {
      const key = `${c.host}:${c.port}`;
      const entry = byBroker.get(key) ?? { broker: { host: c.host, port: c.port }, ids: [] };
      entry.ids.push(c.key);
      byBroker.set(key, entry);
    }
    await Promise.all([...byBroker.values()].map((e) => fn(e.broker, e.ids)));
  }

  async #version(api: ShareApi): Promise<number> {
    this.#versions ??= new Promise<Map<number, [number, number]>>((resolve, reject) =>
      this.#conn.admin[kListApis]((err, apis) =>
        err ? reject(err) : resolve(new Map((apis ?? []).map((a) => [a.apiKey, [a.minVersion, a.maxVersion]]))),
      ),
    );
    const versions = await this.#versions.catch((e: unknown) => {
      this.#versions = null;
      throw e;
    });
    const { key, min, max } = APIS[api];
    const broker = versions.get(key);
    const version = broker ? Math.min(max, broker[1]) : -1;
    if (!broker || version < Math.max(min, broker[0]))
      throw new AppError(
        "UNSUPPORTED",
        `The cluster does not support share groups (${api}): they need Kafka 4.0 or later with share.version 1`,
      );
    return version;
  }

  async #send<T>(broker: Broker, api: ShareApi, write: (w: Writer) => Writer, parse: (r: Reader, version: number) => T): Promise<T> {
    const version = await this.#version(api);
    const connection = await new Promise<Connection>((resolve, reject) =>
      this.#conn.admin[kGetConnection](broker, (err, c) => (err ? reject(err) : resolve(c!))),
    );
    return new Promise<T>((resolve, reject) =>
      connection.send<T>(
        APIS[api].key,
        version,
        () => write(Writer.create()),
        (_correlationId, _apiKey, v, reader) => parse(reader, v),
        true,
        true,
        (err, answer) => (err ? reject(err) : resolve(answer as T)),
      ),
    );
  }
}
