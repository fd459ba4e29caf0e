/**
 * The users API's shapes, declared once: the routes validate and document with them, the
 * service answers their types, and the UI imports the types (ui/api/users.ts).
 */
import { z } from "zod";
import { ROLES } from "../../config/groups.ts";

/** Passwords of users made or changed through the API: long enough to resist guessing, short enough to hash. */
export const PASSWORD_MIN = 12;
export const PASSWORD_MAX = 1024;

export const userName = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$/, "1 to 128 letters, digits, '.', '_', '@' or '-', starting with a letter or digit");
const password = z
  .string()
  .min(PASSWORD_MIN, `a password has at least ${PASSWORD_MIN} characters`)
  .max(PASSWORD_MAX, `a password has at most ${PASSWORD_MAX} characters`);
const groupList = z.array(z.string().min(1).max(100)).max(100, "at most 100 groups");
const email = z.string().email("not an e-mail address").max(320).nullable();

export const createUserBody = z.object({ name: userName, password, groups: groupList.default([]), email: email.optional() }).strict();
export const changeUserBody = z
  .object({
    name: userName.optional(),
    groups: groupList.optional(),
    password: password.optional(),
    disabled: z.boolean().optional(),
    email: email.optional(),
  })
  .strict()
  .refine((b) => b.groups !== undefined || b.password !== undefined || b.disabled !== undefined || b.email !== undefined, {
    message: "name at least one of groups, password, disabled or email to change",
  });
export const ownPasswordBody = z.object({ currentPassword: z.string().max(PASSWORD_MAX), password }).strict();

/** A local user as the API answers it. `roles` are its own (everywhere); its groups' rights come on top. */
export const userView = z.object({
  name: z.string(),
  email: z.string().nullable(),
  groups: z.array(z.string()),
  roles: z.array(z.enum(ROLES)).describe("the user's own roles, on every cluster and topic (config file users); groups add theirs"),
  source: z.enum(["config", "store"]).describe("config: defined in the configuration file, read-only here"),
  disabled: z.boolean(),
  createdAt: z.number().int().nullable(),
  updatedAt: z.number().int().nullable(),
});

export type UserView = z.infer<typeof userView>;
export type NewUser = z.output<typeof createUserBody>;
export type UserChange = Omit<z.output<typeof changeUserBody>, "name">;
export type NewUserBody = z.input<typeof createUserBody>;
export type OwnPasswordBody = z.input<typeof ownPasswordBody>;

/** The answer to a change of one's own password. */
export const passwordAnswer = z.object({ success: z.boolean() });
export type PasswordAnswer = z.output<typeof passwordAnswer>;
