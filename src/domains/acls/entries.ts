/**
 * Bindings between the API's spelling (the SPEC's `Topic`, `Allow`, `DescribeConfigs`) and
 * Kafka's (`TOPIC`, `ALLOW`, `DESCRIBE_CONFIGS`), both ways.
 */
import type { AclBinding } from "../../kafka/index.ts";
import { type AclBody, type AclEntry, OPERATIONS, type Operation, PERMISSIONS, RESOURCE_TYPES, type ResourceType } from "./schemas.ts";

function inverse<K extends string>(names: Record<K, string>): Map<string, K> {
  return new Map((Object.entries(names) as [K, string][]).map(([k, kafka]) => [kafka, k]));
}
const typeNames = inverse(RESOURCE_TYPES);
const operationNames = inverse(OPERATIONS);

/** Kafka's name in the SPEC's spelling; a name beyond the SPEC's (USER, CREATE_TOKENS) in CamelCase. */
function spelled(kafka: string, known: Map<string, string>): string {
  return known.get(kafka) ?? kafka.toLowerCase().replace(/(^|_)([a-z])/g, (_, __, c: string) => c.toUpperCase());
}

export const resourceTypeName = (kafka: string) => spelled(kafka, typeNames);
export const operationName = (kafka: string) => spelled(kafka, operationNames);

export function toEntry(b: AclBinding): AclEntry {
  return {
    resourceType: resourceTypeName(b.resourceType),
    resourceName: b.resourceName,
    principal: b.principal,
    permissionType: b.permission === "DENY" ? "Deny" : "Allow",
    host: b.host,
    operation: operationName(b.operation),
    patternType: b.patternType,
  };
}

export function toBinding(body: AclBody): AclBinding {
  return {
    resourceType: RESOURCE_TYPES[body.resourceType as ResourceType],
    resourceName: body.resourceName,
    patternType: body.patternType,
    principal: body.principal,
    host: body.host,
    operation: OPERATIONS[body.operation as Operation],
    permission: PERMISSIONS[body.permissionType],
  };
}

/** A binding as the audit entry's content names it (values are strings). */
export function described(body: AclBody): Record<string, string> {
  return {
    resourceType: body.resourceType,
    resourceName: body.resourceName,
    patternType: body.patternType,
    principal: body.principal,
    permissionType: body.permissionType,
    host: body.host,
    operation: body.operation,
  };
}

const key = (e: AclEntry) =>
  [e.resourceType, e.patternType, e.resourceName, e.principal, e.host, e.operation, e.permissionType].join("\u0000");

/** Sorted by resource, then principal, then the rest: a stable list to read and compare. */
export function sortEntries(entries: AclEntry[]): AclEntry[] {
  return [...entries].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}
