import { AppError } from "../../errors.ts";
import type { GroupRepo } from "./group-repo.ts";
import type { GroupView } from "./group-schemas.ts";
import type { Group } from "./scope.ts";

/** What a change may name; fields left out keep their value. */
export type GroupChange = Partial<Pick<Group, "roles" | "clusters" | "topics">>;

const CHANGEABLE = ["roles", "clusters", "topics"] as const;

function normalized(g: Group): Group & { topics: { allow: string[]; deny: string[] } } {
  return { name: g.name, roles: g.roles, clusters: g.clusters, topics: { allow: g.topics.allow, deny: g.topics.deny ?? [] } };
}

const readOnly = (name: string) =>
  new AppError(
    "CONFLICT",
    `Group '${name}' is defined in the configuration file, which the API cannot change: edit the file (and reload) instead`,
  );

/**
 * Groups from the config file and from the store, as one list. The file's groups are read-only
 * here and win over a stored group of the same name: the operator's file is the authority, and
 * a group cannot be widened behind its back through the API. A stored group so hidden stays in
 * the store and shows again if the file stops defining that name.
 */
export class GroupService {
  private config: ReadonlyMap<string, Group>;
  private readonly listeners: (() => void)[] = [];

  constructor(
    private readonly repo: GroupRepo,
    configGroups: readonly Group[],
    private readonly now: () => number = Date.now,
  ) {
    this.config = new Map(configGroups.map((g) => [g.name, g]));
  }

  /** Called after every change of a group (the API, a reload): sessions follow it at once. */
  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  private changed(): void {
    for (const l of this.listeners) l();
  }

  /** Replaces the config file's groups (a reload of the file). */
  reloadConfig(groups: readonly Group[]): void {
    this.config = new Map(groups.map((g) => [g.name, g]));
    this.changed();
  }

  /** By name; a name defined in both places is listed once, as the file defines it. */
  async list(): Promise<GroupView[]> {
    const out = new Map<string, GroupView>();
    for (const g of await this.repo.list()) if (!this.config.has(g.name)) out.set(g.name, this.storeView(g));
    for (const g of this.config.values()) out.set(g.name, this.configView(g));
    return [...out.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  async get(name: string): Promise<GroupView> {
    const fromConfig = this.config.get(name);
    if (fromConfig) return this.configView(fromConfig);
    const stored = await this.repo.get(name);
    if (!stored) throw new AppError("NOT_FOUND", `No group named '${name}'`);
    return this.storeView(stored);
  }

  /**
   * The groups of these names that exist, as the scope check reads them (config wins). Unknown
   * names are left out: a membership naming a deleted group grants nothing.
   */
  async resolve(names: readonly string[]): Promise<Group[]> {
    const out: Group[] = [];
    for (const name of new Set(names)) {
      const g = this.config.get(name) ?? (await this.repo.get(name));
      if (g) out.push(normalized(g));
    }
    return out;
  }

  /** 400 naming the groups that do not exist: a membership with a typo would grant nothing, silently. */
  async requireExisting(names: readonly string[]): Promise<void> {
    const known = new Set((await this.resolve(names)).map((g) => g.name));
    const unknown = names.filter((n) => !known.has(n));
    if (unknown.length) throw new AppError("BAD_REQUEST", `No group named ${unknown.map((n) => `'${n}'`).join(", ")}`);
  }

  async create(g: Group): Promise<GroupView> {
    if (this.config.has(g.name)) throw new AppError("CONFLICT", `Group '${g.name}' exists: it is defined in the configuration file`);
    const stored = await this.repo.insert(normalized(g), this.now());
    if (!stored) throw new AppError("CONFLICT", `Group '${g.name}' exists`);
    this.changed();
    return this.storeView(stored);
  }

  /** The group after the change, and the fields that changed with their values before and after. */
  async update(
    name: string,
    change: GroupChange,
  ): Promise<{ group: GroupView; changed: string[]; before: Record<string, unknown>; after: Record<string, unknown> }> {
    if (this.config.has(name)) throw readOnly(name);
    const result = await this.repo.update(
      name,
      (before) =>
        normalized({
          name,
          roles: change.roles ?? before.roles,
          clusters: change.clusters ?? before.clusters,
          topics: change.topics ?? before.topics,
        }),
      this.now(),
    );
    if (!result) throw new AppError("NOT_FOUND", `No group named '${name}'`);
    this.changed();
    const before: Record<string, unknown> = {};
    const after: Record<string, unknown> = {};
    for (const key of CHANGEABLE) {
      const was = normalized(result.before)[key];
      const now = normalized(result.after)[key];
      if (JSON.stringify(was) !== JSON.stringify(now)) {
        before[key] = was;
        after[key] = now;
      }
    }
    return { group: this.storeView(result.after), changed: Object.keys(after), before, after };
  }

  async remove(name: string): Promise<GroupView> {
    if (this.config.has(name)) throw readOnly(name);
    const removed = await this.repo.remove(name);
    if (!removed) throw new AppError("NOT_FOUND", `No group named '${name}'`);
    this.changed();
    return this.storeView(removed);
  }

  private configView(g: Group): GroupView {
    return { ...normalized(g), source: "config", createdAt: null, updatedAt: null };
  }

  private storeView(g: Group & { createdAt: number; updatedAt: number }): GroupView {
    return { ...normalized(g), source: "store", createdAt: g.createdAt, updatedAt: g.updatedAt };
  }
}
