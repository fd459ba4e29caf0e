/**
 * The roles and the groups that grant them: a section of the config file that the groups API
 * (src/domains/access/group-schemas.ts) and the admin pages' forms check with too, apart from
 * schema.ts so that the browser takes it without the whole config schema.
 */
import { z } from "zod";
import { groupName } from "./values.ts";

export const ROLES = ["admin", "write", "read", "nodata"] as const;
export type Role = (typeof ROLES)[number];

/**
 * A group's topic pattern: a Kafka topic name's characters plus the globs `*` (any run) and `?`
 * (one character), at most as long as a topic name. Matched without regular expressions
 * (src/domains/access/scope.ts), so no pattern can be made slow or read as a regex.
 */
export const topicPattern = z
  .string()
  .min(1, "a pattern is empty")
  .max(249, "a pattern is longer than 249 characters")
  .regex(/^[A-Za-z0-9._*?-]+$/, "a pattern holds letters, digits, '.', '_', '-', '*' or '?' only");
export const MAX_GROUP_PATTERNS = 256;

/** Which roles a group grants, on which clusters (`*`: every one) and which topics (deny wins over allow). */
export const groupSchema = z
  .object({
    /** The group's name, as users and LDAP mappings name it. */
    name: groupName,
    /** The roles the group grants (a role includes the ones below it). */
    roles: z.array(z.enum(ROLES)).min(1, "a group needs at least one role").max(ROLES.length),
    /** The clusters it grants them on: names, or `*` for every cluster. */
    clusters: z
      .array(z.union([z.literal("*"), z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, "a cluster name, or '*' for every cluster")]))
      .max(100, "at most 100 clusters"),
    topics: z
      .object({
        /** Topic globs (`*`, `?`) the roles apply to: `*` for every topic. */
        allow: z.array(topicPattern).max(MAX_GROUP_PATTERNS, `at most ${MAX_GROUP_PATTERNS} allow patterns`),
        /** Topic globs taken out of `allow`: deny wins. */
        deny: z.array(topicPattern).max(MAX_GROUP_PATTERNS, `at most ${MAX_GROUP_PATTERNS} deny patterns`).default([]),
      })
      .strict(),
  })
  .strict();
export type GroupConfig = z.infer<typeof groupSchema>;
