/** The groups API (`/api/groups`); types and request schemas from the server's (src/domains/access/group-schemas.ts). */
import { changeGroupBody, createGroupBody, type GroupView, type NewGroup } from "../../src/domains/access/group-schemas.ts";
import { resourceApi, useResources } from "./access.ts";

export type Group = GroupView;
export type { NewGroup };
export type Role = GroupView["roles"][number];

export const groupsApi = resourceApi<Group, Group, typeof createGroupBody, typeof changeGroupBody>("/api/groups", {
  create: createGroupBody,
  change: changeGroupBody,
});

export const useGroups = () => useResources(groupsApi);
