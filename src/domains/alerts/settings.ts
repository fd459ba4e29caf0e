/**
 * Alert settings and their conditions, per cluster, in the store: a setting's state once set
 * (else its shipped default from the catalogue), and the conditions of those that take them.
 */
import type { Db } from "../../db/index.ts";
import { AppError } from "../../errors.ts";
import { ALERTS, type AlertDefinition, alertDefinition } from "./catalogue.ts";
import { checkCondition } from "./conditions.ts";
import type { AlertSetting } from "./schemas.ts";

export class AlertSettings {
  readonly #db: Db;
  readonly #now: () => number;
  readonly #unavailableOn: (cluster: string, id: number) => string | undefined;

  /** `unavailable`: why a setting cannot be evaluated on a cluster (its brokers' endpoints not named), else undefined. */
  constructor(db: Db, opts: { now?: () => number; unavailable?: (cluster: string, id: number) => string | undefined } = {}) {
    this.#db = db;
    this.#now = opts.now ?? Date.now;
    this.#unavailableOn = opts.unavailable ?? (() => undefined);
  }

  /** The setting's definition, or 404. */
  definition(id: number): AlertDefinition {
    const found = alertDefinition(id);
    if (!found) throw new AppError("NOT_FOUND", `Alert setting ${id} does not exist (known: ${ALERTS.map((a) => a.id).join(", ")})`);
    return found;
  }

  async list(cluster: string): Promise<AlertSetting[]> {
    const states = await this.#db.selectFrom("alert_settings").select(["alert_id", "enabled"]).where("cluster", "=", cluster).execute();
    const conditions = await this.#db
      .selectFrom("alert_conditions")
      .select(["id", "alert_id", "expression"])
      .where("cluster", "=", cluster)
      .orderBy("updated_at")
      .execute();
    return ALERTS.map((d) => {
      const state = states.find((s) => s.alert_id === d.id);
      const own = Object.fromEntries(conditions.filter((c) => c.alert_id === d.id).map((c) => [c.id, c.expression]));
      return settingOf(d, state ? state.enabled === 1 : d.enabledByDefault, own, d.unavailable ?? this.#unavailableOn(cluster, d.id));
    });
  }

  async get(cluster: string, id: number): Promise<AlertSetting> {
    this.definition(id);
    return (await this.list(cluster)).find((s) => s.id === id)!;
  }

  /** Whether the setting raises notifications on the cluster now. */
  async enabled(cluster: string, id: number): Promise<boolean> {
    const d = alertDefinition(id);
    const row = await this.#db
      .selectFrom("alert_settings")
      .select("enabled")
      .where("cluster", "=", cluster)
      .where("alert_id", "=", id)
      .executeTakeFirst();
    return row ? row.enabled === 1 : (d?.enabledByDefault ?? true);
  }

  async setEnabled(cluster: string, id: number, enabled: boolean, user: string): Promise<AlertSetting> {
    this.definition(id);
    const values = { cluster, alert_id: id, enabled: enabled ? 1 : 0, updated_by: user, updated_at: this.#now() };
    await this.#db
      .insertInto("alert_settings")
      .values(values)
      .onConflict((oc) =>
        oc.columns(["cluster", "alert_id"]).doUpdateSet({ enabled: values.enabled, updated_by: user, updated_at: values.updated_at }),
      )
      .execute();
    return this.get(cluster, id);
  }

  async conditions(cluster: string, id: number): Promise<Record<string, string>> {
    return (await this.get(cluster, id)).conditions;
  }

  /** Every stored condition of a setting on every cluster, for the evaluation. */
  async allConditions(id: number): Promise<{ id: string; cluster: string; expression: string }[]> {
    return this.#db.selectFrom("alert_conditions").select(["id", "cluster", "expression"]).where("alert_id", "=", id).execute();
  }

  /**
   * Creates or replaces a condition (a new id when none is given); 400 with the template when
   * it does not match it, or when the setting takes none. A uuid of another setting or cluster is 409.
   */
  async putCondition(
    cluster: string,
    id: number,
    text: string,
    user: string,
    conditionId?: string,
  ): Promise<{ id: string; expression: string; created: boolean }> {
    const expression = checkCondition(this.definition(id), text);
    const uuid = conditionId ?? crypto.randomUUID();
    const existing = await this.#db.selectFrom("alert_conditions").selectAll().where("id", "=", uuid).executeTakeFirst();
    if (existing && (existing.cluster !== cluster || existing.alert_id !== id))
      throw new AppError("CONFLICT", `Condition ${uuid} belongs to another alert setting or cluster`);
    const now = this.#now();
    if (existing) {
      await this.#db
        .updateTable("alert_conditions")
        .set({ expression, updated_by: user, updated_at: now })
        .where("id", "=", uuid)
        .execute();
    } else {
      await this.#db
        .insertInto("alert_conditions")
        .values({ id: uuid, cluster, alert_id: id, expression, updated_by: user, updated_at: now })
        .execute();
    }
    return { id: uuid, expression, created: !existing };
  }

  /** Removes a condition; 404 when the setting has no such condition. */
  async deleteCondition(cluster: string, id: number, conditionId: string): Promise<string> {
    this.definition(id);
    const row = await this.#db
      .deleteFrom("alert_conditions")
      .where("id", "=", conditionId)
      .where("cluster", "=", cluster)
      .where("alert_id", "=", id)
      .returning("expression")
      .executeTakeFirst();
    if (!row) throw new AppError("NOT_FOUND", `Alert setting ${id} has no condition ${conditionId}`);
    return row.expression;
  }
}

function settingOf(
  d: AlertDefinition,
  enabled: boolean,
  conditions: Record<string, string>,
  unavailable: string | undefined,
): AlertSetting {
  return {
    id: d.id,
    description: d.description,
    category: d.category,
    enabled,
    isAvailable: unavailable === undefined,
    unavailableReason: unavailable ?? null,
    docs: d.docs,
    conditions,
    conditionTemplate: d.conditionTemplate ?? null,
    conditionRegex: d.conditionRegex ?? "",
    severity: d.severity,
  };
}
