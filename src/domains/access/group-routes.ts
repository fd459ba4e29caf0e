import { changedFields, crudApi, crudRoutes } from "../../http/crud.ts";
import { changeGroupBody, createGroupBody, type GroupView, groupName, groupView } from "./group-schemas.ts";
import type { GroupService } from "./group-service.ts";

export const groupApi = crudApi({
  path: "/api/groups",
  noun: "group",
  tags: ["access"],
  name: groupName,
  view: groupView,
  createBody: createGroupBody,
  changeBody: changeGroupBody,
  summaries: {
    list: "Every group, from the configuration file and the store, by name",
    create: "Create a group (409 when the name exists, in the store or the configuration file)",
    get: "One group",
    update: "Change a group's roles, clusters or topics (fields left out are kept; 409 for a group of the configuration file)",
    remove: "Delete a group (409 for a group of the configuration file)",
  },
  answers: { created: "The group created", updated: "The group after the change", removed: "The group deleted" },
});

/** What an audit entry says of a whole group. */
const described = (g: GroupView) => ({
  group: g.name,
  roles: g.roles,
  clusters: g.clusters,
  allow: g.topics.allow,
  deny: g.topics.deny,
});

export function groupRoutes(groups: GroupService) {
  return crudRoutes(groupApi, "group", {
    described,
    list: () => groups.list(),
    get: (name) => groups.get(name),
    create: (body) => groups.create(body),
    update: async (name, change) => {
      const { group, changed, before, after } = await groups.update(name, change);
      return { view: group, audit: { group: name, changed: changedFields(changed), before, after } };
    },
    remove: (name) => groups.remove(name),
  });
}
