/**
 * Kafka 4 share groups (KIP-932) beside the consumer groups: their detail (members, assignments,
 * start offset and lag per partition), start-offset resets and deletions, deleting the group,
 * and its `share.*` configs. Scoped as consumer groups are: a group's topics are those it has
 * start offsets on, subscribes to or is assigned; a caller sees a group when one of them is
 * visible, and changes it only when every topic the change touches is theirs to write.
 */

import { badRequest, conflict, notFound } from "../../errors.ts";
import type { KafkaCluster, KafkaPool, ShareGroupDescription } from "../../kafka/index.ts";
import { groupOutsideScope, isVisible, requireTopics, type TopicFilter } from "../topics/visibility.ts";
import { type OffsetReset, type OffsetTarget, resetTarget } from "./reset-target.ts";
import type { ConsumerGroupSummary, GroupConfigEntry, ShareGroupDetail } from "./schemas.ts";

/** The configs of a share group that may be changed here. */
const SHARE_PREFIX = "share.";

type Offsets = Awaited<ReturnType<KafkaCluster["shareGroups"]["startOffsets"]>> extends Map<string, infer L> ? L : never;

function topicsOf(d: ShareGroupDescription, offsets: Offsets): string[] {
  const out = new Set(offsets.map((o) => o.topic));
  for (const m of d.members) {
    for (const t of m.subscribedTopics) out.add(t);
    for (const a of m.assignments) out.add(a.topic);
  }
  return [...out].sort();
}

const notShareGroup = (group: string) => notFound(`Share group '${group}' does not exist`);

export class ShareGroupService {
  constructor(private readonly pool: KafkaPool) {}

  /**
   * Every share group in the consumer-group list's shape (type "share"), or, given a filter,
   * those with a visible topic, each with its visible topics and their lag only. A cluster
   * without share groups (before Kafka 4) has none.
   */
  async list(cluster: string, visible: TopicFilter = null): Promise<ConsumerGroupSummary[]> {
    const kafka = this.pool.get(cluster);
    const groups = await kafka.shareGroups.list().catch((e: unknown) => {
      if ((e as { code?: string }).code === "UNSUPPORTED") return [];
      throw e;
    });
    if (groups.length === 0) return [];
    const ids = groups.map((g) => g.groupId);
    const [described, offsets] = await Promise.all([kafka.shareGroups.describe(ids), kafka.shareGroups.startOffsets(ids)]);
    const out: ConsumerGroupSummary[] = [];
    for (const [i, g] of groups.entries()) {
      const d = described[i]!;
      const offs = (offsets.get(g.groupId) ?? []).filter((o) => isVisible(visible, o.topic));
      const topics = topicsOf(d, offs).filter((t) => isVisible(visible, t));
      if (visible && topics.length === 0) continue;
      out.push({
        id: g.groupId,
        state: d.state === "Dead" ? g.state : d.state,
        type: "share",
        protocolType: "share",
        protocol: d.assignor,
        members: d.members.length,
        topics,
        lag: offs.reduce((s, o) => s + (o.lag ?? 0), 0),
      });
    }
    return out;
  }

  /**
   * The group with its offsets and topics. 403 when no topic of it is visible, whether it exists
   * or not, so a scoped caller cannot probe for group names; 404 for anyone else when it does not
   * exist. `scoped`: the caller checks the scope itself (a change), and a missing group is not 404.
   */
  async #load(kafka: KafkaCluster, group: string, visible: TopicFilter, scoped = visible !== null) {
    const [[d], offsets] = await Promise.all([kafka.shareGroups.describe([group]), kafka.shareGroups.startOffsets([group])]);
    const offs = offsets.get(group) ?? [];
    const topics = topicsOf(d!, offs);
    if (visible && !topics.some(visible)) throw groupOutsideScope(group);
    if (!scoped && d!.state === "Dead" && offs.length === 0) throw notShareGroup(group);
    return { d: d!, offsets: offs, topics };
  }

  async get(cluster: string, group: string, visible: TopicFilter = null): Promise<ShareGroupDetail> {
    const { d, offsets } = await this.#load(this.pool.get(cluster), group, visible);
    const assigned = new Map<string, number>();
    for (const m of d.members)
      for (const a of m.assignments)
        assigned.set(`${a.topic}\u0000${a.partition}`, (assigned.get(`${a.topic}\u0000${a.partition}`) ?? 0) + 1);
    const shown = offsets
      .filter((o) => isVisible(visible, o.topic))
      .map((o) => ({
        topic: o.topic,
        partition: o.partition,
        startOffset: o.startOffset,
        logEndOffset: o.endOffset,
        lag: o.lag,
        members: assigned.get(`${o.topic}\u0000${o.partition}`) ?? 0,
      }));
    return {
      id: group,
      state: d.state === "Dead" ? "Empty" : d.state,
      type: "share",
      groupEpoch: d.groupEpoch,
      assignmentEpoch: d.assignmentEpoch,
      assignor: d.assignor,
      members: d.members.map((m) => ({
        ...m,
        subscribedTopics: m.subscribedTopics.filter((t) => isVisible(visible, t)),
        assignments: m.assignments.filter((a) => isVisible(visible, a.topic)),
      })),
      offsets: shown,
      lag: shown.reduce((s, o) => s + (o.lag ?? 0), 0),
    };
  }

  /** 409 unless the group has no members: Kafka refuses otherwise, as its own tool does. */
  #requireEmpty(group: string, d: ShareGroupDescription, what: string): void {
    if (d.members.length > 0 || !["Empty", "Dead"].includes(d.state))
      throw conflict(
        `Share group '${group}' is ${d.state} with ${d.members.length} member${d.members.length === 1 ? "" : "s"}: ` +
          `${what} only while the group is empty; stop its consumers first`,
        { state: d.state, members: d.members.length },
      );
  }

  /**
   * Moves the group's start offsets (earliest, latest, a time or explicit offsets): the records
   * from there on are delivered again, or skipped. Only while the group is empty.
   */
  async resetOffsets(cluster: string, group: string, reset: OffsetReset, allowed: TopicFilter = null): Promise<OffsetTarget[]> {
    requireTopics(allowed, "offsets" in reset ? reset.offsets.map((o) => o.topic) : (reset.topics ?? []));
    const kafka = this.pool.get(cluster);
    const [[d], offsets] = await Promise.all([kafka.shareGroups.describe([group]), kafka.shareGroups.startOffsets([group])]);
    this.#requireEmpty(group, d!, "start offsets can be changed");
    const current = async () => [...new Set((offsets.get(group) ?? []).map((o) => o.topic))];
    const target = await resetTarget(kafka, reset, current, allowed, `Share group '${group}'`);
    await kafka.shareGroups.alterStartOffsets(group, target);
    return target;
  }

  /** Drops the group's start offsets on `topics`: it stops consuming them (an empty group only). */
  async deleteOffsets(cluster: string, group: string, topics: string[], allowed: TopicFilter = null): Promise<void> {
    requireTopics(allowed, topics);
    const kafka = this.pool.get(cluster);
    const { d, topics: own } = await this.#load(kafka, group, null, allowed !== null);
    this.#requireEmpty(group, d, "start offsets can be deleted");
    const unknown = topics.filter((t) => !own.includes(t));
    if (unknown.length) throw badRequest(`Share group '${group}' has no start offsets on ${unknown.join(", ")}`, { topics: unknown });
    await kafka.shareGroups.deleteStartOffsets(group, topics);
  }

  /** Every topic of the group must pass `allowed`: deleting it drops its start offsets on all of them. */
  async delete(cluster: string, group: string, allowed: TopicFilter = null, scoped = allowed !== null): Promise<void> {
    const kafka = this.pool.get(cluster);
    const { topics } = await this.#load(kafka, group, null, scoped);
    if (topics.length === 0 && scoped) throw groupOutsideScope(group);
    requireTopics(allowed, topics);
    await kafka.groups.delete([group]);
  }

  /** The group's `share.*` configs (its own values and the brokers' defaults). */
  async configs(cluster: string, group: string, visible: TopicFilter = null): Promise<GroupConfigEntry[]> {
    const kafka = this.pool.get(cluster);
    await this.#load(kafka, group, visible);
    return (await kafka.configs.describeGroup(group))
      .filter((c) => c.name.startsWith(SHARE_PREFIX))
      .map(({ defaultValue: _, type: _t, synonyms: _s, ...c }) => c);
  }

  /**
   * Sets (or, with a null value, removes) the group's own `share.*` configs, checked by the
   * brokers first (validateOnly). Like deleting the group, it changes how every topic of it is
   * consumed: each must pass `allowed`.
   */
  async alterConfigs(
    cluster: string,
    group: string,
    configs: Array<{ key: string; value: string | null }>,
    allowed: TopicFilter = null,
    scoped = allowed !== null,
  ): Promise<void> {
    const keys = new Set<string>();
    for (const c of configs) {
      if (keys.has(c.key)) throw badRequest(`Config '${c.key}' is given twice`);
      keys.add(c.key);
    }
    const other = configs.filter((c) => !c.key.startsWith(SHARE_PREFIX)).map((c) => c.key);
    if (other.length) throw badRequest(`Only share.* configs can be changed on a share group: ${other.join(", ")}`, { keys: other });
    const kafka = this.pool.get(cluster);
    const { topics } = await this.#load(kafka, group, null, scoped);
    if (topics.length === 0 && scoped) throw groupOutsideScope(group);
    requireTopics(allowed, topics);
    const known = new Set((await kafka.configs.describeGroup(group)).map((c) => c.name));
    const unknown = configs.filter((c) => !known.has(c.key)).map((c) => c.key);
    if (unknown.length) throw badRequest(`Unknown share group config${unknown.length > 1 ? "s" : ""}: ${unknown.join(", ")}`, { unknown });
    await kafka.configs.alterGroup(group, configs, { validateOnly: true });
    await kafka.configs.alterGroup(group, configs);
  }
}
