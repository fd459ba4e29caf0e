/** The login and session answers. Imports only zod: the UI takes its types and its form's check from here. */
import { z } from "zod";

export const loginBody = z.object({
  user: z.string().min(1).max(256),
  password: z.string().max(1024),
});

export const userShape = z.object({
  id: z.string(),
  name: z.string(),
  email: z.string().nullable(),
  roles: z.array(z.string()).describe("every role the identity holds somewhere; its groups say where"),
  groups: z.array(z.string()),
  kind: z.enum(["local", "ldap", "service"]),
});
export const loginAnswer = z.object({ success: z.boolean(), token: z.string(), user: userShape, schemaRegistryDelete: z.boolean() });
/**
 * `user` is the user's NAME: the clients compare it with a name and decode it as a string (an
 * object breaks the Go client's decoding); the user record is under `userInfo`.
 */
export const sessionAnswer = z.object({
  token: z.string(),
  user: z.string(),
  userInfo: userShape,
  roles: z.array(z.string()),
  administrator: z.boolean().describe("holds admin without limits (every cluster and topic): the admin-level routes are open to it"),
  clusterRoles: z
    .array(z.string())
    .describe("the roles the identity's groups grant on the request's cluster (x-service-cluster), highest first; [] when none"),
  everyTopic: z.boolean().describe("whether those roles reach every topic of that cluster (false for an identity limited to some topics)"),
  schemaRegistryDelete: z.boolean(),
  expiresAt: z.number(),
});

export type LoginAnswer = z.output<typeof loginAnswer>;
export type SessionAnswer = z.output<typeof sessionAnswer>;
