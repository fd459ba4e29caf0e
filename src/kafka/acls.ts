/**
 * ACLs: described by filter, created, deleted; Kafka's numeric enumerations to and from
 * Loupe's names. A cluster without an authorizer answers BAD_REQUEST (SECURITY_DISABLED).
 */

import {
  type Acl,
  AclOperations,
  AclPermissionTypes,
  type Admin,
  type AclFilter as ClientAclFilter,
  ResourcePatternTypes,
  ResourceTypes,
} from "@platformatic/kafka";
import { AppError } from "../errors.ts";
import type { KafkaConnection } from "./connection.ts";
import type { AclBinding, AclBindingFilter } from "./types.ts";

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

export class AclOps {
  readonly #conn: KafkaConnection;

  constructor(conn: KafkaConnection) {
    this.#conn = conn;
  }

  describe(filter: AclBindingFilter = {}): Promise<AclBinding[]> {
    return this.#conn.call("Cannot list ACLs", () => describeAcls(this.#conn.admin, filter));
  }

  create(bindings: AclBinding[]): Promise<void> {
    return this.#conn.call("Cannot create ACLs", async () => {
      if (bindings.length > 0) await this.#conn.admin.createAcls({ creations: bindings.map(toClientAcl) });
    });
  }

  /** Answers the ACLs that were deleted. */
  delete(filters: AclBindingFilter[]): Promise<AclBinding[]> {
    return this.#conn.call("Cannot delete ACLs", async () => {
      if (filters.length === 0) return [];
      const deleted = await this.#conn.admin.deleteAcls({ filters: filters.map(toClientAclFilter) });
      return deleted.map(fromClientAcl);
    });
  }
}
