/** The ACL API (`/api/acl`); types and request schemas from the server's (src/domains/acls/schemas.ts). */
import { useQuery } from "@tanstack/react-query";
import { type AclBodyInput, type AclEntry, aclBody, type Explanation } from "../../src/domains/acls/schemas.ts";
import { api } from "../session.ts";
import { checked } from "./check.ts";

export type { AclBodyInput, AclEntry, Explanation };

export const ACLS_KEY = ["acls"] as const;

export const fetchAcls = () => api<AclEntry[]>("/api/acl");
export const createAcl = (body: AclBodyInput) => api<AclEntry>("/api/acl", { method: "PUT", body: JSON.stringify(checked(aclBody, body)) });
export const deleteAcl = (body: AclBodyInput) =>
  api<AclEntry>("/api/acl", { method: "DELETE", body: JSON.stringify(checked(aclBody, body)) });

/** The question: principal, resourceType, resourceName, operation, and host when given. */
export const explainAcl = (q: Record<string, string>) => api<Explanation>(`/api/acl/explain?${new URLSearchParams(q)}`);

export const useAcls = (cluster: string | null) => useQuery({ queryKey: [...ACLS_KEY, cluster], queryFn: fetchAcls, retry: false });
