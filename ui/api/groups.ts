/** The groups API (`/api/groups`); types from the server's schemas (src/domains/access/group-schemas.ts). */
import type { GroupChangeBody, GroupView, NewGroup } from "../../src/domains/access/group-schemas.ts";
import { resourceApi, useResources } from "./access.ts";

export type Group = GroupView;
export type { NewGroup };
export type Role = GroupView["roles"][number];

export const groupsApi = resourceApi<Group, Group, NewGroup, GroupChangeBody>("/api/groups");

export const useGroups = () => useResources(groupsApi);
