/**
 * The masking policies API's shapes, declared once: the routes validate and document with them,
 * the service answers their types.
 */
import { z } from "zod";
import { ROLES, topicPattern } from "../../config/groups.ts";
import { groupName } from "../../config/values.ts";

export const MASK_METHODS = ["REDACT", "HASH", "KEEP_LAST_N", "REMOVE"] as const;
export type MaskMethod = (typeof MASK_METHODS)[number];

/** What REDACT shows when the policy names no replacement. */
export const DEFAULT_REPLACEMENT = "****";

export const policyName = z
  .string()
  .min(1, "a policy name is empty")
  .max(64, "a policy name is longer than 64 characters")
  .regex(/^[A-Za-z0-9._-]+$/, "a policy name holds letters, digits, '.', '_' or '-' only");

/**
 * A field name, or a dotted path from the value's root (`card.number`); each segment may hold the
 * globs `*` and `?`. One segment matches the field at any depth; array indices are not written.
 */
export const fieldPattern = z
  .string()
  .min(1, "a field pattern is empty")
  .max(256, "a field pattern is longer than 256 characters")
  .regex(/^[^.\s]+(\.[^.\s]+)*$/, "a field pattern is a name or a dotted path of names (no empty segment, no whitespace)")
  .refine((p) => p.split(".").length <= 32, "a field pattern has at most 32 segments")
  .refine(
    (p) => !p.startsWith("_key."),
    "'_key' masks the whole key and takes no path: name a key's field as any field (patterns cover the key and the value)",
  )
  .refine((p) => p !== "_headers", "name the headers a pattern masks: '_headers.<name>' (a glob)")
  .describe("a field name or dotted path (each segment a glob); '_key' masks the whole key; '_headers.<name>' masks those headers' values");

const MAX_LIST = 256;

const policyFields = {
  /** Topic globs (`*`, `?`) the policy covers. */
  topics: z.array(topicPattern).min(1, "name at least one topic pattern").max(MAX_LIST),
  fields: z.array(fieldPattern).min(1, "name at least one field pattern").max(MAX_LIST),
  method: z
    .enum(MASK_METHODS)
    .describe("REDACT: a constant; HASH: HMAC-SHA-256 under the install's salt; KEEP_LAST_N: the last N characters; REMOVE: left out"),
  replacement: z.string().max(256).optional().describe(`REDACT only: what the field shows (default ${DEFAULT_REPLACEMENT})`),
  keepLast: z.number().int().min(1).max(64).optional().describe("KEEP_LAST_N only: how many characters stay clear"),
  groups: z.array(groupName).max(MAX_LIST).default([]).describe("the Loupe groups masked"),
  roles: z
    .array(z.enum(ROLES))
    .max(ROLES.length)
    .default([])
    .describe("the roles masked: a viewer whose highest role on the query's cluster is one of them"),
  exceptGroups: z
    .array(groupName)
    .max(MAX_LIST)
    .default([])
    .describe("groups that see the clear value, even when a group or role above masks them"),
};

type PolicyShape = {
  method: MaskMethod;
  replacement?: string | undefined;
  keepLast?: number | undefined;
  groups: string[];
  roles: string[];
};

/** What one field's check alone cannot say: the method's own settings, and whom the policy masks. */
function checkPolicy(p: PolicyShape, ctx: z.RefinementCtx): void {
  if (p.method === "KEEP_LAST_N" && p.keepLast === undefined)
    ctx.addIssue({ code: "custom", path: ["keepLast"], message: "KEEP_LAST_N needs keepLast" });
  if (p.method !== "KEEP_LAST_N" && p.keepLast !== undefined)
    ctx.addIssue({ code: "custom", path: ["keepLast"], message: "keepLast is for KEEP_LAST_N only" });
  if (p.method !== "REDACT" && p.replacement !== undefined)
    ctx.addIssue({ code: "custom", path: ["replacement"], message: "replacement is for REDACT only" });
  if (p.groups.length === 0 && p.roles.length === 0)
    ctx.addIssue({ code: "custom", path: ["groups"], message: "name at least one group or role the policy masks" });
}

export const createPolicyBody = z
  .object({ name: policyName, ...policyFields })
  .strict()
  .superRefine((p, ctx) => checkPolicy(p, ctx));

/** A change names the fields it changes (a list is replaced whole); the policy after it is checked as a new one. */
export const changePolicyBody = z
  .object({
    name: policyName.optional(),
    topics: policyFields.topics.optional(),
    fields: policyFields.fields.optional(),
    method: policyFields.method.optional(),
    replacement: z.string().max(256).nullable().optional(),
    keepLast: z.number().int().min(1).max(64).nullable().optional(),
    groups: z.array(groupName).max(MAX_LIST).optional(),
    roles: z.array(z.enum(ROLES)).max(ROLES.length).optional(),
    exceptGroups: z.array(groupName).max(MAX_LIST).optional(),
  })
  .strict()
  .refine((b) => Object.keys(b).some((k) => k !== "name"), { message: "name at least one field to change" });

/** A policy as the API answers it. */
export const policyView = z.object({
  name: z.string(),
  topics: z.array(z.string()),
  fields: z.array(z.string()),
  method: z.enum(MASK_METHODS),
  replacement: z.string().nullable(),
  keepLast: z.number().int().nullable(),
  groups: z.array(z.string()),
  roles: z.array(z.enum(ROLES)),
  exceptGroups: z.array(z.string()),
  createdAt: z.number().int(),
  updatedAt: z.number().int(),
});

export type PolicyView = z.infer<typeof policyView>;
export type NewPolicy = z.output<typeof createPolicyBody>;
export type PolicyChange = Omit<z.output<typeof changePolicyBody>, "name">;

/** The policy `p` checked whole (after a change), with the error a change that breaks it answers. */
export function checkedPolicy(p: z.input<typeof createPolicyBody>): { ok: true; policy: NewPolicy } | { ok: false; message: string } {
  const r = createPolicyBody.safeParse(p);
  if (r.success) return { ok: true, policy: r.data };
  return { ok: false, message: r.error.issues.map((i) => `${i.path.join(".") || "body"}: ${i.message}`).join("; ") };
}
