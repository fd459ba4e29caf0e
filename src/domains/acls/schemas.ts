/**
 * The ACL API's shapes, declared once: the routes validate and document with them, the service
 * answers their types, and the UI imports them (ui/api/acls.ts) to offer only what is valid.
 *
 * Enumerations arrive in any spelling the clients use: the SPEC's `DescribeConfigs`, the Go
 * client's upper-cased `DESCRIBE_CONFIGS`, its CLI's `DESCRIBECONFIGS`, the Python client's
 * `Read`. They are compared ignoring case, `_`, `-` and spaces, and answered in the SPEC's spelling.
 */
import { z } from "zod";

/** The SPEC's spelling of each resource type, with Kafka's name for it. */
export const RESOURCE_TYPES = {
  Topic: "TOPIC",
  Group: "GROUP",
  Cluster: "CLUSTER",
  TransactionalId: "TRANSACTIONAL_ID",
  DelegationToken: "DELEGATION_TOKEN",
} as const;
export type ResourceType = keyof typeof RESOURCE_TYPES;

export const OPERATIONS = {
  All: "ALL",
  Read: "READ",
  Write: "WRITE",
  Create: "CREATE",
  Delete: "DELETE",
  Alter: "ALTER",
  Describe: "DESCRIBE",
  ClusterAction: "CLUSTER_ACTION",
  DescribeConfigs: "DESCRIBE_CONFIGS",
  AlterConfigs: "ALTER_CONFIGS",
  IdempotentWrite: "IDEMPOTENT_WRITE",
} as const;
export type Operation = keyof typeof OPERATIONS;

export const PERMISSIONS = { Allow: "ALLOW", Deny: "DENY" } as const;

export const PATTERN_TYPES = ["LITERAL", "PREFIXED"] as const;
export type PatternType = (typeof PATTERN_TYPES)[number];

/**
 * The operations an ACL may name on each resource type: the SPEC's table, with what Kafka's
 * authorizer also checks on that type (Create and Alter on a topic: creating it, adding
 * partitions; a group's configs since Kafka 3.8). Anything else is refused with these listed.
 */
export const RESOURCE_OPERATIONS: Record<ResourceType, readonly Operation[]> = {
  Topic: ["Read", "Write", "Create", "Delete", "Alter", "Describe", "DescribeConfigs", "AlterConfigs", "All"],
  Group: ["Read", "Describe", "Delete", "DescribeConfigs", "AlterConfigs", "All"],
  Cluster: ["Create", "ClusterAction", "DescribeConfigs", "AlterConfigs", "IdempotentWrite", "Alter", "Describe", "All"],
  TransactionalId: ["Describe", "Write", "All"],
  DelegationToken: ["Describe", "All"],
};

/** The one name a Cluster resource has in Kafka. */
export const CLUSTER_RESOURCE_NAME = "kafka-cluster";

const folded = (s: string) => s.replace(/[\s_-]/g, "").toLowerCase();

/** A schema taking any spelling of `names` (and of their Kafka names) and answering the SPEC's. */
function spelling<K extends string>(names: Record<K, string>, what: string) {
  const byFolded = new Map<string, K>();
  for (const [k, kafka] of Object.entries(names) as [K, string][]) {
    byFolded.set(folded(k), k);
    byFolded.set(folded(kafka), k);
  }
  const listed = Object.keys(names).join(", ");
  return z.string({ error: `${what} is required (one of ${listed})` }).transform((v, ctx) => {
    const k = byFolded.get(folded(v));
    if (k === undefined) {
      ctx.addIssue({ code: "custom", message: `unknown ${what} '${v}': one of ${listed}` });
      return z.NEVER;
    }
    return k;
  });
}

export const resourceTypeField = spelling(RESOURCE_TYPES, "resourceType");
export const operationField = spelling(OPERATIONS, "operation");
export const permissionField = spelling(PERMISSIONS, "permissionType");
export const patternTypeField = spelling({ LITERAL: "LITERAL", PREFIXED: "PREFIXED" } as Record<PatternType, string>, "patternType");

const required = (field: string, hint = "") => z.string({ error: `${field} is required${hint}` });

/** `<type>:<name>`, as Kafka writes principals: `User:alice`, `User:*` for every user. */
export const principalField = required("principal", " (e.g. User:alice)")
  .max(1024, "principal has at most 1024 characters")
  .regex(/^[^:\s]+:\S.*$/, "principal is '<type>:<name>', e.g. User:alice or User:* for every user");

const resourceNameField = required("resourceName")
  .min(1, "resourceName is required ('*' for every resource of the type)")
  .max(1024, "resourceName has at most 1024 characters");

const hostField = required("host", " ('*' for any host)")
  .min(1, "host is required ('*' for any host)")
  .max(255, "host has at most 255 characters")
  .regex(/^\S+$/, "host is '*' or an IP address, without spaces");

/** Checks what no single field can: the operation against the type, the name of a cluster. */
function checkBinding(
  b: { resourceType: ResourceType; resourceName: string; operation: Operation; patternType: PatternType },
  ctx: z.RefinementCtx,
) {
  const allowed = RESOURCE_OPERATIONS[b.resourceType];
  if (!allowed.includes(b.operation))
    ctx.addIssue({
      code: "custom",
      path: ["operation"],
      message: `operation ${b.operation} is not valid for resourceType ${b.resourceType}: one of ${allowed.join(", ")}`,
    });
  if (b.resourceType === "Cluster" && b.resourceName !== CLUSTER_RESOURCE_NAME)
    ctx.addIssue({ code: "custom", path: ["resourceName"], message: `a Cluster resource is named '${CLUSTER_RESOURCE_NAME}'` });
  if (b.patternType === "PREFIXED" && b.resourceName === "*")
    ctx.addIssue({
      code: "custom",
      path: ["resourceName"],
      message: "a PREFIXED resourceName cannot be '*' (use LITERAL '*' for every resource)",
    });
}

/** One binding as PUT and DELETE take it: the SPEC's six fields, all required, and `patternType`. */
export const aclBody = z
  .object({
    resourceType: resourceTypeField,
    resourceName: resourceNameField,
    principal: principalField,
    permissionType: permissionField,
    host: hostField,
    operation: operationField,
    patternType: patternTypeField.default("LITERAL"),
  })
  .superRefine(checkBinding);

/** One binding as the API answers it: the SPEC's ACL entry, plus its pattern type. */
export const aclEntry = z.object({
  resourceType: z.string().describe("Topic, Group, Cluster, TransactionalId or DelegationToken (Kafka's name for a type beyond these)"),
  resourceName: z.string(),
  principal: z.string().describe("<type>:<name>, e.g. User:alice"),
  permissionType: z.enum(["Allow", "Deny"]),
  host: z.string().describe("'*' for any host"),
  operation: z.string().describe("Read, Write, Describe, DescribeConfigs, ... (the SPEC's spelling)"),
  patternType: z
    .string()
    .describe("LITERAL (the name, or '*' for every resource of the type) or PREFIXED (every name that starts with it)"),
});

export type AclBody = z.output<typeof aclBody>;
export type AclBodyInput = z.input<typeof aclBody>;
export type AclEntry = z.output<typeof aclEntry>;

/** The question `GET /api/acl/explain` answers: may this principal do this? */
export const explainQuery = z
  .object({
    principal: principalField,
    resourceType: resourceTypeField,
    resourceName: resourceNameField,
    operation: operationField,
    host: hostField.optional().describe("the client's IP address; absent: a host no ACL names"),
  })
  .superRefine((q, ctx) => checkBinding({ ...q, patternType: "LITERAL" }, ctx));
export type ExplainQuery = z.output<typeof explainQuery>;

/** Why the answer is what it is, after StandardAuthorizer's rules. */
export const EXPLAIN_REASONS = ["NO_AUTHORIZER", "SUPER_USER", "DENY_ACL", "ALLOW_ACL", "NO_MATCHING_ACL"] as const;
export type ExplainReason = (typeof EXPLAIN_REASONS)[number];

const consideredBinding = aclEntry.extend({
  applies: z.boolean().describe("whether it applies to this principal, host and operation"),
  why: z.string().describe("why it applies or not"),
});

export const explanation = z.object({
  principal: z.string(),
  resourceType: z.string(),
  resourceName: z.string(),
  operation: z.string(),
  host: z.string().nullable(),
  allowed: z
    .boolean()
    .nullable()
    .describe("null: it depends on a broker setting Loupe cannot read (allow.everyone.if.no.acl.found, super.users); see caveats"),
  reason: z.enum(EXPLAIN_REASONS),
  summary: z.string().describe("the answer in one sentence"),
  deciding: z
    .array(aclEntry)
    .describe("the bindings that decide the answer: every applying DENY when one applies, else the applying ALLOWs"),
  considered: z
    .array(consideredBinding)
    .describe("every binding on this resource (literal, prefixed, wildcard), whether it applies and why"),
  caveats: z.array(z.string()).describe("what Loupe cannot know of the brokers' settings, and what it assumed"),
});
export type Explanation = z.output<typeof explanation>;
export type ConsideredBinding = z.output<typeof consideredBinding>;
