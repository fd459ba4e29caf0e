/**
 * The service accounts API's shapes, declared once: the routes validate and document with them,
 * the service answers their types, and the UI imports the types (ui/api/service-accounts.ts).
 */
import { z } from "zod";

/** The name is the part of the token before its colon: no colon in it, and safe in a URL path. */
export const accountName = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/, "1 to 100 letters, digits, '.', '_' or '-', starting with a letter or digit");
const groupList = z.array(z.string().min(1).max(100)).max(100, "at most 100 groups");
/** Epoch milliseconds, or an ISO 8601 time. */
const expiry = z
  .union([z.number().int().positive(), z.string().datetime({ offset: true, message: "expected epoch milliseconds or an ISO 8601 time" })])
  .transform((v) => (typeof v === "number" ? v : Date.parse(v)));

export const createAccountBody = z.object({ name: accountName, groups: groupList, expiresAt: expiry.nullable().optional() }).strict();
export const changeAccountBody = z
  .object({
    name: accountName.optional(),
    groups: groupList.optional(),
    expiresAt: expiry.nullable().optional(),
    disabled: z.boolean().optional(),
  })
  .strict()
  .refine((b) => b.groups !== undefined || b.expiresAt !== undefined || b.disabled !== undefined, {
    message: "name at least one of groups, expiresAt or disabled to change",
  });

/** A service account as the API answers it; its secret never. */
export const accountView = z.object({
  name: z.string(),
  groups: z.array(z.string()),
  expiresAt: z.number().int().nullable(),
  disabled: z.boolean(),
  createdBy: z.string(),
  createdAt: z.number().int(),
  updatedAt: z.number().int(),
  lastUsedAt: z.number().int().nullable(),
});
/** The answer to a creation: the only time the secret leaves the server. */
export const createdAccountView = accountView.extend({
  secret: z.string().describe("shown only in this answer"),
  token: z.string().describe("`name:secret`: send it as x-service-token or Authorization: Bearer"),
});

export type ServiceAccountView = z.infer<typeof accountView>;
export type CreatedServiceAccount = z.infer<typeof createdAccountView>;
export type ServiceAccountChange = Omit<z.output<typeof changeAccountBody>, "name">;
export type NewServiceAccountBody = z.input<typeof createAccountBody>;
