/**
 * Data masking policies: which fields of which topics' records which viewers see masked, and
 * how. The policies live in the store; `maskFor` compiles those that apply to one viewer and
 * topic into the RecordMask the query engine applies where it decodes records (src/engine/mask.ts),
 * through SqlService's RecordMasks port. Knows nothing of HTTP.
 */

import { type MaskHow, type MaskRule, RecordMask } from "../../engine/index.ts";
import { AppError } from "../../errors.ts";
import { globMatch } from "../access/scope.ts";
import type { RecordMasks, Viewer } from "../sql/service.ts";
import type { MaskingRepo } from "./repo.ts";
import { checkedPolicy, DEFAULT_REPLACEMENT, type NewPolicy, type PolicyChange, type PolicyView } from "./schemas.ts";

/**
 * Whether the policy masks the viewer: an exception group wins; else one of its groups, or the
 * viewer's highest role on the query's cluster among its roles.
 */
export function masksViewer(p: Pick<PolicyView, "groups" | "roles" | "exceptGroups">, viewer: Viewer): boolean {
  if (p.exceptGroups.some((g) => viewer.groups.includes(g))) return false;
  if (p.groups.some((g) => viewer.groups.includes(g))) return true;
  const highest = viewer.roles[0];
  return highest !== undefined && (p.roles as readonly string[]).includes(highest);
}

/** The fields a change may name; those left out keep their value. */
const CHANGEABLE = ["topics", "fields", "method", "replacement", "keepLast", "groups", "roles", "exceptGroups"] as const;

export class MaskingService implements RecordMasks {
  #salt: Promise<string> | null = null;
  readonly #changed: Array<(why: string) => void> = [];

  constructor(
    private readonly repo: MaskingRepo,
    private readonly now: () => number = Date.now,
  ) {}

  /** Called after each change of a policy (processors whose owner it now masks are paused). */
  onChange(listener: (why: string) => void): void {
    this.#changed.push(listener);
  }

  #tell(why: string): void {
    for (const l of this.#changed) l(why);
  }

  list(): Promise<PolicyView[]> {
    return this.repo.list();
  }

  async get(name: string): Promise<PolicyView> {
    const p = await this.repo.get(name);
    if (!p) throw new AppError("NOT_FOUND", `No masking policy named '${name}'`);
    return p;
  }

  async create(p: NewPolicy): Promise<PolicyView> {
    const created = await this.repo.insert(p, this.now());
    if (!created) throw new AppError("CONFLICT", `A masking policy named '${p.name}' exists already`);
    this.#tell(`masking policy '${p.name}' added`);
    return created;
  }

  /** The policy after the change and the names of the fields it changed. */
  async update(name: string, change: PolicyChange): Promise<{ policy: PolicyView; changed: string[]; before: PolicyView }> {
    const changed = CHANGEABLE.filter((k) => change[k] !== undefined);
    const done = await this.repo.update(
      name,
      (before) => {
        const method = change.method ?? before.method;
        // A method's own setting goes with it: one switched away from is dropped, one named in
        // the change is kept (and refused when the method does not take it).
        const replacement = change.replacement !== undefined ? change.replacement : method === "REDACT" ? before.replacement : null;
        const keepLast = change.keepLast !== undefined ? change.keepLast : method === "KEEP_LAST_N" ? before.keepLast : null;
        const whole = {
          name,
          topics: change.topics ?? before.topics,
          fields: change.fields ?? before.fields,
          method,
          groups: change.groups ?? before.groups,
          roles: change.roles ?? before.roles,
          exceptGroups: change.exceptGroups ?? before.exceptGroups,
          ...(replacement != null ? { replacement } : {}),
          ...(keepLast != null ? { keepLast } : {}),
        };
        const checked = checkedPolicy(whole);
        if (!checked.ok) throw new AppError("VALIDATION_FAILED", `The policy after this change is not valid: ${checked.message}`);
        return checked.policy;
      },
      this.now(),
    );
    if (!done) throw new AppError("NOT_FOUND", `No masking policy named '${name}'`);
    this.#tell(`masking policy '${name}' changed`);
    return { policy: done.after, changed, before: done.before };
  }

  async remove(name: string): Promise<PolicyView> {
    const removed = await this.repo.remove(name);
    if (!removed) throw new AppError("NOT_FOUND", `No masking policy named '${name}'`);
    return removed;
  }

  /**
   * The mask of `topic`'s records for `viewer`: every field pattern of every policy that covers
   * the topic and masks the viewer. Read from the store at each call, so a change applies to the
   * next query on every instance sharing the store.
   */
  async maskFor(viewer: Viewer, _cluster: string, topic: string): Promise<RecordMask | null> {
    const applying = (await this.repo.list()).filter((p) => masksViewer(p, viewer) && p.topics.some((t) => globMatch(t, topic)));
    if (applying.length === 0) return null;
    const rules: MaskRule[] = [];
    for (const p of applying) {
      const how = await this.#how(p);
      for (const pattern of p.fields) {
        const segments = pattern.split(".").map((s) => (name: string) => globMatch(s, name));
        rules.push({ pattern, segments, how });
      }
    }
    return new RecordMask(rules);
  }

  async #how(p: PolicyView): Promise<MaskHow> {
    switch (p.method) {
      case "REDACT":
        return { kind: "REDACT", replacement: p.replacement ?? DEFAULT_REPLACEMENT };
      case "HASH":
        this.#salt ??= this.repo.salt().catch((err: unknown) => {
          this.#salt = null;
          throw err;
        });
        return { kind: "HASH", salt: await this.#salt };
      case "KEEP_LAST_N":
        return { kind: "KEEP_LAST_N", n: p.keepLast ?? 0 };
      case "REMOVE":
        return { kind: "REMOVE" };
    }
  }
}
