/**
 * The groups API's shapes, declared once: the routes validate and document with them, the
 * service answers their types, and the UI imports the types (ui/api/groups.ts).
 */
import { z } from "zod";
import { groupSchema, ROLES } from "../../config/groups.ts";
import { groupName } from "../../config/values.ts";

export { groupName };
export const createGroupBody = groupSchema;

/** A change names the fields it changes; `name` may be repeated but not changed (a rename is a new group). */
export const changeGroupBody = groupSchema
  .omit({ name: true })
  .partial()
  .extend({ name: groupName.optional() })
  .strict()
  .refine((b) => b.roles !== undefined || b.clusters !== undefined || b.topics !== undefined, {
    message: "name at least one of roles, clusters or topics to change",
  });

/** A group as the API answers it: where it is defined, and (stored ones) when it was made and last changed. */
export const groupView = z.object({
  name: z.string(),
  roles: z.array(z.enum(ROLES)),
  clusters: z.array(z.string()),
  topics: z.object({ allow: z.array(z.string()), deny: z.array(z.string()) }),
  source: z.enum(["config", "store"]).describe("config: defined in the configuration file, read-only here"),
  createdAt: z.number().int().nullable(),
  updatedAt: z.number().int().nullable(),
});

export type GroupView = z.infer<typeof groupView>;
export type NewGroup = z.input<typeof createGroupBody>;
