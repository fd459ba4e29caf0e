import { z } from "zod";
import { duration, groupName } from "./values.ts";

const ldapUrl = z
  .string()
  .trim()
  .regex(/^ldaps?:\/\/[^\s/?#]+\/?$/i, "expected ldap://host:port or ldaps://host:port");

/**
 * The directory Loupe logs users in against: search-then-bind with a service account, the
 * user's groups from `memberOf` or a group search, mapped to Loupe groups. See docs/identity.md, "LDAP".
 */
export const ldapSchema = z
  .object({
    /** One URL, or several tried in turn when one cannot be reached (failover, not load sharing). */
    url: z.union([ldapUrl, z.array(ldapUrl).min(1, "at least one URL")]).transform((v) => (Array.isArray(v) ? v : [v])),
    /** Upgrades an ldap:// connection with StartTLS before anything is sent over it. */
    startTls: z.boolean().default(false),
    /** PEM file of the CA (or CAs) that signed the directory's certificate, for ldaps:// and StartTLS. */
    ca: z.string().min(1).optional(),
    /** `false` accepts any certificate: encrypted, but open to a man in the middle. */
    rejectUnauthorized: z.boolean().default(true),
    /** The service account that searches for users and groups; it needs read access, never write. */
    bindDn: z.string().min(1, "the service account's DN is required"),
    /** The service account's password (or `bindPasswordFile`). */
    bindPassword: z.string().min(1).optional(),
    /** A file holding the service account's password (trailing newline ignored), to keep it out of the config file. */
    bindPasswordFile: z.string().min(1).optional(),
    /** Where users are searched (whole subtree). */
    userBase: z.string().min(1, "the DN under which users are searched is required"),
    /** `{user}` is the typed name, escaped (RFC 4515). */
    userFilter: z.string().trim().includes("{user}", { message: "the filter must contain {user}" }).default("(uid={user})"),
    /** The attribute that holds a user's email address. */
    emailAttribute: z.string().min(1).default("mail"),
    groups: z
      .object({
        /** `memberOf` (read from the user's entry) or `search` (under `groups.base`). */
        source: z.enum(["memberOf", "search"]).default("memberOf"),
        /** Where groups are searched (source `search`). */
        base: z.string().min(1).optional(),
        /** `{dn}`: the user's DN; `{user}`: the user's name (e.g. `(memberUid={user})` for posixGroup). */
        filter: z
          .string()
          .trim()
          .refine((f) => f.includes("{dn}") || f.includes("{user}"), "the filter must contain {dn} or {user}")
          .default("(member={dn})"),
        /** The attribute that names a group, as groupMappings names it. */
        nameAttribute: z.string().min(1).default("cn"),
      })
      .strict()
      .default({ source: "memberOf", filter: "(member={dn})", nameAttribute: "cn" }),
    /** Directory group (its name, e.g. cn, or its full DN; case-insensitive) -> Loupe groups. */
    groupMappings: z.record(z.string().min(1), z.array(groupName)).default({}),
    /** Loupe groups every directory user gets, whatever their directory groups. */
    defaultGroups: z.array(groupName).default([]),
    /** To open a connection (and, with TLS, to complete its handshake). */
    connectTimeout: duration.default(5_000),
    /** Per directory operation; a whole login or lookup gets connectTimeout + timeout at most. */
    timeout: duration.default(5_000),
    /** How often a live token's groups are re-read from the directory. */
    refreshInterval: duration.default(300_000),
  })
  .strict()
  // Also runs when a key above failed (zod reports every problem at once): read defensively.
  .superRefine((cfg, ctx) => {
    const hasPassword = cfg.bindPassword !== undefined;
    const hasFile = cfg.bindPasswordFile !== undefined;
    if (hasPassword === hasFile)
      ctx.addIssue({ code: "custom", path: ["bindPassword"], message: "set exactly one of bindPassword and bindPasswordFile" });
    const ldaps = (Array.isArray(cfg.url) ? cfg.url : []).some((u) => /^ldaps:/i.test(u));
    if (cfg.startTls && ldaps)
      ctx.addIssue({ code: "custom", path: ["startTls"], message: "StartTLS is for ldap:// URLs; an ldaps:// URL is encrypted already" });
    if (cfg.ca !== undefined && !cfg.startTls && !ldaps)
      ctx.addIssue({ code: "custom", path: ["ca"], message: "a CA is used only with an ldaps:// URL or startTls = true" });
    if (cfg.groups?.source === "search" && cfg.groups.base === undefined)
      ctx.addIssue({ code: "custom", path: ["groups", "base"], message: "a group search needs its base DN" });
    if (cfg.connectTimeout === 0 || cfg.timeout === 0)
      ctx.addIssue({
        code: "custom",
        path: ["timeout"],
        message: "timeouts must be above 0: a directory that never answers would hang logins",
      });
  });

export type LdapConfig = z.infer<typeof ldapSchema>;
