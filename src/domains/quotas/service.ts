import type { KafkaPool, QuotaEntry as KafkaQuotaEntry } from "../../kafka/index.ts";
import { effectiveOf, entriesOf, entryOf, kafkaEntity, propertiesOf, sameTarget, targetOf } from "./entries.ts";
import type { EffectiveQuota, QuotaEntry, QuotaKey, QuotaProperties, QuotaValues } from "./schemas.ts";
import type { QuotaTarget } from "./targets.ts";

/** A change as made: the entry after it, and the constraints it had before (for the audit). */
export interface QuotaChange {
  entry: QuotaEntry;
  before: QuotaProperties;
}

/** How long a change waits for the broker to list it before answering anyway. */
const SETTLE_MS = 2_000;
const SETTLE_STEP_MS = 50;

/**
 * Client quotas of a cluster in the SPEC's terms (entries.ts maps them). Kafka commits a change
 * on the controller and the brokers apply it a moment later: the entry a change answers is
 * computed from what was there and what changed, and the answer waits (up to 2 s) until the
 * broker lists it, so that a list asked right after shows it (the UI's, a script's).
 */
export class QuotaService {
  constructor(private readonly pool: KafkaPool) {}

  async list(cluster: string, canChange: boolean): Promise<QuotaEntry[]> {
    return entriesOf(await this.#all(cluster), canChange);
  }

  async effective(cluster: string, user: string, clientId: string): Promise<EffectiveQuota> {
    return effectiveOf(await this.#all(cluster), user, clientId);
  }

  /** Sets the constraints given; the others stay as they are. */
  async set(cluster: string, target: QuotaTarget, values: QuotaValues): Promise<QuotaChange> {
    const before = await this.#valuesOf(cluster, target);
    const change: Record<string, number> = {};
    for (const [k, v] of Object.entries(values)) if (v !== undefined) change[k] = v;
    await this.pool.get(cluster).quotas.alter([{ entity: kafkaEntity(target), values: change }]);
    const after = { ...before, ...change };
    await this.#settled(cluster, target, after);
    return { entry: entryOf(target, after, true), before: propertiesOf(before) };
  }

  /** Removes the constraints named; removing one that is not set changes nothing and is no error. */
  async remove(cluster: string, target: QuotaTarget, keys: QuotaKey[]): Promise<QuotaChange> {
    const before = await this.#valuesOf(cluster, target);
    await this.pool.get(cluster).quotas.alter([{ entity: kafkaEntity(target), values: Object.fromEntries(keys.map((k) => [k, null])) }]);
    const after = Object.fromEntries(Object.entries(before).filter(([k]) => !keys.includes(k as QuotaKey)));
    await this.#settled(cluster, target, after);
    return { entry: entryOf(target, after, true), before: propertiesOf(before) };
  }

  async #settled(cluster: string, target: QuotaTarget, want: Record<string, number>): Promise<void> {
    const deadline = performance.now() + SETTLE_MS;
    while (performance.now() < deadline) {
      if (Bun.deepEquals(await this.#valuesOf(cluster, target), want)) return;
      await Bun.sleep(SETTLE_STEP_MS);
    }
  }

  #all(cluster: string): Promise<KafkaQuotaEntry[]> {
    return this.pool.get(cluster).quotas.describe();
  }

  async #valuesOf(cluster: string, target: QuotaTarget): Promise<Record<string, number>> {
    const filters = kafkaEntity(target).map((e) =>
      e.name === null ? { type: e.type, match: "default" as const } : { type: e.type, match: "exact" as const, name: e.name },
    );
    const found = await this.pool.get(cluster).quotas.describe(filters, { strict: true });
    return (
      found.find((d) => {
        const t = targetOf(d.entity);
        return t !== null && sameTarget(t, target);
      })?.values ?? {}
    );
  }
}
