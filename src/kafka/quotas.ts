/**
 * Client quotas (by user, client id or address): described by filter and altered; a null
 * value removes a quota.
 */

import { type Admin, ClientQuotaMatchTypes, type describeClientQuotasV0 } from "@platformatic/kafka";
import { AppError } from "../errors.ts";
import type { KafkaConnection } from "./connection.ts";
import type { QuotaAlteration, QuotaEntity, QuotaEntry, QuotaFilter } from "./types.ts";

export function toQuotaComponents(filters: QuotaFilter[]): describeClientQuotasV0.DescribeClientQuotasRequestComponent[] {
  return filters.map((f) => {
    if (f.match === "exact") {
      if (f.name === undefined) throw new AppError("BAD_REQUEST", `An exact quota match on ${f.type} needs a name`);
      return { entityType: f.type, matchType: ClientQuotaMatchTypes.EXACT, match: f.name };
    }
    return { entityType: f.type, matchType: f.match === "default" ? ClientQuotaMatchTypes.DEFAULT : ClientQuotaMatchTypes.ANY };
  });
}

export async function describeQuotas(admin: Admin, filters: QuotaFilter[], strict: boolean): Promise<QuotaEntry[]> {
  const entries = await admin.describeClientQuotas({ components: toQuotaComponents(filters), strict });
  return (entries ?? []).map((e) => ({
    entity: e.entity.map((x) => ({ type: x.entityType as QuotaEntity["type"], name: x.entityName ?? null })),
    values: Object.fromEntries(e.values.map((v) => [v.key, v.value])),
  }));
}

export async function alterQuotas(admin: Admin, alterations: QuotaAlteration[], validateOnly: boolean): Promise<void> {
  await admin.alterClientQuotas({
    validateOnly,
    entries: alterations.map((a) => ({
      entities: a.entity.map((x) => ({ entityType: x.type, entityName: x.name })),
      ops: Object.entries(a.values).map(([key, value]) =>
        value === null ? { key: key as never, remove: true as const } : { key: key as never, value, remove: false as const },
      ),
    })),
  });
}

export class QuotaOps {
  readonly #conn: KafkaConnection;

  constructor(conn: KafkaConnection) {
    this.#conn = conn;
  }

  /** No filter: every quota. */
  describe(filters: QuotaFilter[] = [], opts: { strict?: boolean } = {}): Promise<QuotaEntry[]> {
    return this.#conn.call("Cannot list quotas", () => describeQuotas(this.#conn.admin, filters, opts.strict ?? false));
  }

  alter(alterations: QuotaAlteration[], opts: { validateOnly?: boolean } = {}): Promise<void> {
    return this.#conn.call("Cannot change quotas", async () => {
      if (alterations.length > 0) await alterQuotas(this.#conn.admin, alterations, opts.validateOnly ?? false);
    });
  }
}
