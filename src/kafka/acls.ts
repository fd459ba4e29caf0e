/**
 * ACLs and client quotas: Kafka's numeric enumerations to and from Loupe's names.
 */

import {
  type Acl,
  AclOperations,
  AclPermissionTypes,
  type Admin,
  type AclFilter as ClientAclFilter,
  ClientQuotaMatchTypes,
  type describeClientQuotasV0,
  ResourcePatternTypes,
  ResourceTypes,
} from "@platformatic/kafka";
import { AppError } from "../errors.ts";
import type { AclBinding, AclBindingFilter, QuotaAlteration, QuotaEntity, QuotaEntry, QuotaFilter } from "./types.ts";

function invert<K extends string, V extends number>(table: Record<K, V>): Map<number, K> {
  return new Map(Object.entries(table).map(([k, v]) => [v as number, k as K]));
}

const resourceNames = invert(ResourceTypes);
const patternNames = invert(ResourcePatternTypes);
const operationNames = invert(AclOperations);
const permissionNames = invert(AclPermissionTypes);

function lookup<T extends Record<string, number>>(table: T, value: string, what: string): T[keyof T] {
  const key = value.toUpperCase().replace(/[\s-]/g, "_");
  if (!(key in table) || key === "UNKNOWN") throw new AppError("BAD_REQUEST", `Unknown ACL ${what} '${value}'`);
  return table[key as keyof T];
}

export function toClientAcl(b: AclBinding): Acl {
  return {
    resourceType: lookup(ResourceTypes, b.resourceType, "resource type"),
    resourceName: b.resourceName,
    resourcePatternType: lookup(ResourcePatternTypes, b.patternType, "pattern type"),
    principal: b.principal,
    host: b.host,
    operation: lookup(AclOperations, b.operation, "operation"),
    permissionType: lookup(AclPermissionTypes, b.permission, "permission"),
  };
}

export function toClientAclFilter(f: AclBindingFilter): ClientAclFilter {
  return {
    resourceType: lookup(ResourceTypes, f.resourceType ?? "ANY", "resource type"),
    resourceName: f.resourceName ?? null,
    resourcePatternType: lookup(ResourcePatternTypes, f.patternType ?? "ANY", "pattern type"),
    principal: f.principal ?? null,
    host: f.host ?? null,
    operation: lookup(AclOperations, f.operation ?? "ANY", "operation"),
    permissionType: lookup(AclPermissionTypes, f.permission ?? "ANY", "permission"),
  };
}

export function fromClientAcl(a: Acl): AclBinding {
  return {
    resourceType: (resourceNames.get(a.resourceType) ?? "UNKNOWN") as AclBinding["resourceType"],
    resourceName: a.resourceName,
    patternType: (patternNames.get(a.resourcePatternType) ?? "UNKNOWN") as AclBinding["patternType"],
    principal: a.principal,
    host: a.host,
    operation: (operationNames.get(a.operation) ?? "UNKNOWN") as AclBinding["operation"],
    permission: (permissionNames.get(a.permissionType) ?? "UNKNOWN") as AclBinding["permission"],
  };
}

export async function describeAcls(admin: Admin, filter: AclBindingFilter): Promise<AclBinding[]> {
  const resources = await admin.describeAcls({ filter: toClientAclFilter(filter) });
  const out: AclBinding[] = [];
  for (const r of resources) {
    for (const p of r.acls) {
      out.push(
        fromClientAcl({ resourceType: r.resourceType, resourceName: r.resourceName, resourcePatternType: r.resourcePatternType, ...p }),
      );
    }
  }
  return out;
}

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
