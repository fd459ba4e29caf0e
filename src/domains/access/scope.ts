/**
 * What a set of groups lets an identity do: which roles apply on a cluster and on a topic of it.
 * Pure: no store, no HTTP, no Kafka. The checks of every request and every list read it, so a
 * scope is compiled once (patterns sorted into exact names, prefixes and general globs) and a
 * decision is a few set and string look-ups, without regular expressions: a pattern is never
 * read as a regex, and no pattern can make matching slow (the general matcher is linear in
 * pattern times name, both bounded by the schema).
 */
import type { GroupConfig, Role } from "../../config/schema.ts";
import { type InternalTopics, internalTopicMessage } from "./internal-topics.ts";
import { globCovers, globsMeet, isPattern } from "./pattern-relations.ts";

export type Group = GroupConfig;

/**
 * What a check is for: a topic's `records` (reading or writing them, or changing the topic),
 * or its `metadata` at a role's level (a consumer group's offsets and lag, a table list). Only
 * the first is limited on internal topics.
 */
export type TopicUse = "records" | "metadata";

/**
 * Roles include the ones below them, as the access levels do (src/http/access.ts): a group
 * granting `write` on a topic also lets its members read it.
 */
const RANK: Record<Role, number> = { nodata: 0, read: 1, write: 2, admin: 3 };

/** Whether holding `held` satisfies a need for `needed`. */
export function roleCovers(held: Role, needed: Role): boolean {
  return RANK[held] >= RANK[needed];
}

/**
 * `*` any run of characters (also none), `?` exactly one; everything else literal, anchored at
 * both ends. Iterative with one saved star position: O(pattern × name) at worst, never
 * exponential, whatever the pattern.
 */
export function globMatch(pattern: string, name: string): boolean {
  let p = 0;
  let n = 0;
  let star = -1;
  let mark = 0;
  while (n < name.length) {
    const pc = pattern[p];
    if (pc === "?" || (pc !== undefined && pc !== "*" && pc === name[n])) {
      p++;
      n++;
    } else if (pc === "*") {
      star = p++;
      mark = n;
    } else if (star >= 0) {
      p = star + 1;
      n = ++mark;
    } else return false;
  }
  while (pattern[p] === "*") p++;
  return p === pattern.length;
}

/**
 * Fixed strings looked up by length: a name matches when one of its first (or last) n
 * characters is in the set for some length n held. A few set look-ups per distinct length,
 * whatever the number of strings.
 */
class AffixSet {
  private readonly byLength = new Map<number, Set<string>>();

  add(text: string): void {
    let set = this.byLength.get(text.length);
    if (!set) this.byLength.set(text.length, (set = new Set()));
    set.add(text);
  }

  get size(): number {
    return this.byLength.size;
  }

  hasPrefixOf(name: string): boolean {
    for (const [n, set] of this.byLength) if (n <= name.length && set.has(name.slice(0, n))) return true;
    return false;
  }

  hasSuffixOf(name: string): boolean {
    for (const [n, set] of this.byLength) if (n <= name.length && set.has(name.slice(name.length - n))) return true;
    return false;
  }
}

/** A general glob with its literal head and tail, which most names fail before the matcher runs. */
interface Glob {
  pattern: string;
  head: string;
  tail: string;
}

/** A list of patterns, sorted by the cheapest way to match each. */
class PatternSet {
  private readonly exact = new Set<string>();
  /** `abc*` */
  private readonly prefixes = new AffixSet();
  /** `*abc` */
  private readonly suffixes = new AffixSet();
  private readonly globs: Glob[] = [];
  private any = false;
  /** Every pattern as given (`**` collapsed): what pattern-to-pattern checks compare. */
  readonly patterns: string[] = [];

  constructor(patterns: readonly string[]) {
    for (const raw of patterns) {
      const p = raw.replace(/\*{2,}/g, "*");
      this.patterns.push(p);
      if (p === "*") this.any = true;
      else if (!/[*?]/.test(p)) this.exact.add(p);
      else if (p.endsWith("*") && !/[*?]/.test(p.slice(0, -1))) this.prefixes.add(p.slice(0, -1));
      else if (p.startsWith("*") && !/[*?]/.test(p.slice(1))) this.suffixes.add(p.slice(1));
      else {
        const first = p.search(/[*?]/);
        const last = Math.max(p.lastIndexOf("*"), p.lastIndexOf("?"));
        this.globs.push({ pattern: p, head: p.slice(0, first), tail: p.slice(last + 1) });
      }
    }
  }

  /** Matches every name (`*`). */
  get all(): boolean {
    return this.any;
  }

  get empty(): boolean {
    return !this.any && this.exact.size === 0 && this.prefixes.size === 0 && this.suffixes.size === 0 && this.globs.length === 0;
  }

  matches(name: string): boolean {
    if (this.any || this.exact.has(name)) return true;
    if (this.prefixes.hasPrefixOf(name) || this.suffixes.hasSuffixOf(name)) return true;
    for (const g of this.globs) if (name.startsWith(g.head) && name.endsWith(g.tail) && globMatch(g.pattern, name)) return true;
    return false;
  }
}

interface CompiledGroup {
  readonly name: string;
  readonly roles: readonly Role[];
  readonly everyCluster: boolean;
  readonly clusters: ReadonlySet<string>;
  readonly allow: PatternSet;
  readonly deny: PatternSet;
}

function compileGroup(g: Group): CompiledGroup {
  return {
    name: g.name,
    roles: [...new Set(g.roles)],
    everyCluster: g.clusters.includes("*"),
    clusters: new Set(g.clusters),
    allow: new PatternSet(g.topics.allow),
    deny: new PatternSet(g.topics.deny ?? []),
  };
}

const onCluster = (g: CompiledGroup, cluster: string) => g.everyCluster || g.clusters.has(cluster);

/** The compiled rights of one identity: the union over its groups. */
export class Scope {
  private readonly groups: readonly CompiledGroup[];
  /**
   * Roles granted without any limit: by groups naming every cluster and allowing every topic
   * with nothing denied. Loupe-wide administration (users, groups, audit, ACLs) needs `admin`
   * from here: an admin scoped to some topics could otherwise widen their own scope.
   */
  readonly unrestricted: ReadonlySet<Role>;

  /**
   * Internal topics (Kafka's, Connect's, the registry's, Loupe's): on them, every role above
   * `nodata` is an unrestricted admin's only, whatever the groups allow. Seeing that one
   * exists follows the groups as for any topic.
   */
  readonly internal: InternalTopics | undefined;
  /** Whether `internal` limits this identity (it is no unrestricted admin). */
  readonly #internalLimited: boolean;

  constructor(
    groups: readonly Group[],
    /** Equal for equal groups: an open stream compares it to see whether its identity's rights changed. */
    readonly key = scopeKey(groups),
    internal?: InternalTopics,
  ) {
    this.groups = groups.map(compileGroup);
    this.unrestricted = new Set(this.groups.filter((g) => g.everyCluster && g.allow.all && g.deny.empty).flatMap((g) => g.roles));
    this.internal = internal;
    this.#internalLimited = internal !== undefined && !this.unrestricted.has("admin");
  }

  /** Whether a need for `role` on an internal topic is refused to this identity. */
  #limitedFor(role: Role | undefined, use: TopicUse): boolean {
    return this.#internalLimited && use === "records" && role !== undefined && role !== "nodata";
  }

  #isInternal(topic: string): boolean {
    return this.internal?.has(topic) === true;
  }

  /** Every role any group grants, anywhere: what a session shows as its roles. */
  get allRoles(): Role[] {
    return sortRoles(new Set(this.groups.flatMap((g) => g.roles)));
  }

  /** Whether every topic of the cluster is in scope for `role`: lists then need no filtering. */
  everyTopic(cluster: string, role?: Role, use: TopicUse = "records"): boolean {
    return !this.#limitedFor(role, use) && this.#everyTopicByGroups(cluster, role);
  }

  #everyTopicByGroups(cluster: string, role?: Role): boolean {
    return this.groups.some(
      (g) => onCluster(g, cluster) && g.allow.all && g.deny.empty && (!role || g.roles.some((r) => roleCovers(r, role))),
    );
  }

  /** The names of the groups it was made of. */
  get groupNames(): string[] {
    return this.groups.map((g) => g.name);
  }

  /**
   * Roles of the groups that name the cluster, whatever their topics: what cluster-wide routes
   * (brokers, the consumer group list) are checked against. Sorted from highest.
   */
  clusterRoles(cluster: string): Role[] {
    const roles = new Set<Role>();
    for (const g of this.groups) if (onCluster(g, cluster)) for (const r of g.roles) roles.add(r);
    return sortRoles(roles);
  }

  /** Roles that apply to the topic: those of each group naming the cluster whose allow list matches and deny list does not. */
  topicRoles(cluster: string, topic: string): Role[] {
    const roles = new Set<Role>();
    for (const g of this.groups) {
      if (!onCluster(g, cluster) || !g.allow.matches(topic) || g.deny.matches(topic)) continue;
      for (const r of g.roles) roles.add(r);
    }
    if (roles.size > 0 && this.#internalLimited && this.#isInternal(topic)) return ["nodata"];
    return sortRoles(roles);
  }

  /** Whether any role applies to the topic, or (given `role`) one that covers it. */
  topicAllowed(cluster: string, topic: string, role?: Role, use: TopicUse = "records"): boolean {
    if (this.#limitedFor(role, use) && this.#isInternal(topic)) return false;
    for (const g of this.groups) {
      if (!onCluster(g, cluster) || (role && !g.roles.some((r) => roleCovers(r, role)))) continue;
      if (g.allow.matches(topic) && !g.deny.matches(topic)) return true;
    }
    return false;
  }

  /**
   * Why the identity may not use the topic with `role`, in words, or undefined when it may:
   * the message every path's refusal gives (an internal topic says whose it is).
   */
  refusal(cluster: string, topic: string, role?: Role, use: TopicUse = "records"): string | undefined {
    if (this.topicAllowed(cluster, topic, role, use)) return undefined;
    const owner = this.#limitedFor(role, use) ? this.internal?.ownerOf(topic) : undefined;
    return owner ? internalTopicMessage(topic, owner) : `Topic '${topic}' is outside your scope`;
  }

  /**
   * As `refusal`, for a glob of topic names (`*`, `?`) a request reaches without naming them (a
   * connector's `topics.regex`): undefined only when every name it matches is in scope for
   * `role` and none is internal. One group must allow all of it (one of its allow patterns
   * covering the glob, none of its deny patterns meeting it); a glob without wildcards is the
   * one topic it names.
   */
  patternRefusal(cluster: string, glob: string, role?: Role, use: TopicUse = "records"): string | undefined {
    if (!isPattern(glob)) return this.refusal(cluster, glob, role, use);
    if (this.#limitedFor(role, use) && this.internal) {
      const internal = internalPatternRefusal(this.internal, glob);
      if (internal) return internal;
    }
    for (const g of this.groups) {
      if (!onCluster(g, cluster) || (role && !g.roles.some((r) => roleCovers(r, role)))) continue;
      if (g.allow.patterns.some((p) => globCovers(p, glob)) && !g.deny.patterns.some((d) => globsMeet(d, glob))) return undefined;
    }
    return `Topics matching '${glob}' are not all in your scope`;
  }

  /** The topics of `names` in scope, in their order: what a list answers. */
  filterTopics(cluster: string, names: readonly string[], role?: Role, use: TopicUse = "records"): string[] {
    const limited = this.#limitedFor(role, use);
    const open = (t: string) => !limited || !this.#isInternal(t);
    if (this.#everyTopicByGroups(cluster, role)) return limited ? names.filter(open) : [...names];
    // Only the groups that can allow anything on this cluster take part.
    const relevant = this.groups.filter(
      (g) => onCluster(g, cluster) && !g.allow.empty && (!role || g.roles.some((r) => roleCovers(r, role))),
    );
    if (relevant.length === 0) return [];
    return names.filter((t) => open(t) && relevant.some((g) => g.allow.matches(t) && !g.deny.matches(t)));
  }
}

/**
 * Why a glob of topic names reaches internal topics, naming whose and the first internal
 * pattern it meets; undefined when it reaches none.
 */
export function internalPatternRefusal(internal: InternalTopics, glob: string): string | undefined {
  if (!isPattern(glob)) {
    const owner = internal.ownerOf(glob);
    return owner ? internalTopicMessage(glob, owner) : undefined;
  }
  const hit = internal.patterns().find((p) => globsMeet(p.glob, glob));
  return hit
    ? `Topics matching '${glob}' include topics internal to ${hit.owner} ('${hit.glob}'): only an admin without limits may read or write their records`
    : undefined;
}

function sortRoles(roles: Set<Role>): Role[] {
  return [...roles].sort((a, b) => RANK[b] - RANK[a]);
}

/**
 * Compiled scopes by the groups' content, so that each request of an identity reuses the
 * compiled form until a group changes (its content, hence its key, then differs). Bounded:
 * cleared when it grows past `MAX_CACHED`, which only costs a recompile.
 */
const caches = new WeakMap<InternalTopics, Map<string, Scope>>();
const plainCache = new Map<string, Scope>();
const MAX_CACHED = 1000;

function scopeKey(groups: readonly Group[]): string {
  return JSON.stringify(groups.map((g) => [g.name, g.roles, g.clusters, g.topics.allow, g.topics.deny ?? []]));
}

/** The compiled scope of `groups`; `internal` (one per running Loupe) limits roles on internal topics. */
export function compileScope(groups: readonly Group[], internal?: InternalTopics): Scope {
  const key = scopeKey(groups);
  let cache = plainCache;
  if (internal) {
    cache = caches.get(internal) ?? new Map();
    caches.set(internal, cache);
  }
  let scope = cache.get(key);
  if (!scope) {
    if (cache.size >= MAX_CACHED) cache.clear();
    scope = new Scope(groups, key, internal);
    cache.set(key, scope);
  }
  return scope;
}

/** Roles of the groups that name the cluster (see `Scope.clusterRoles`). */
export function effectiveRoles(groups: readonly Group[], cluster: string): Role[] {
  return compileScope(groups).clusterRoles(cluster);
}

/** Whether the groups allow the topic at all, or (given `role`) with a role covering it. */
export function topicAllowed(groups: readonly Group[], cluster: string, topic: string, role?: Role): boolean {
  return compileScope(groups).topicAllowed(cluster, topic, role);
}

/** Roles that apply to one topic (see `Scope.topicRoles`). */
export function topicRoles(groups: readonly Group[], cluster: string, topic: string): Role[] {
  return compileScope(groups).topicRoles(cluster, topic);
}
