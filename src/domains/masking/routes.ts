import { changedFields, crudApi, crudRoutes } from "../../http/crud.ts";
import { changePolicyBody, createPolicyBody, type PolicyView, policyName, policyView } from "./schemas.ts";
import type { MaskingService } from "./service.ts";

export const maskingApi = crudApi({
  path: "/api/masking/policies",
  noun: "masking policy",
  tags: ["masking"],
  name: policyName,
  view: policyView,
  createBody: createPolicyBody,
  changeBody: changePolicyBody,
  summaries: {
    list: "Every data masking policy, by name",
    create: "Create a data masking policy (409 when the name exists); it applies to queries started from then on",
    get: "One data masking policy",
    update: "Change a data masking policy (fields left out are kept; the policy after the change is checked whole)",
    remove: "Delete a data masking policy",
  },
  answers: { created: "The policy created", updated: "The policy after the change", removed: "The policy deleted" },
});

/** What an audit entry says of a whole policy. */
const described = (p: PolicyView) => ({
  maskingPolicy: p.name,
  topics: p.topics,
  fields: p.fields,
  method: p.method,
  groups: p.groups,
  roles: p.roles,
  exceptGroups: p.exceptGroups,
});

export function maskingRoutes(masking: MaskingService) {
  return crudRoutes(maskingApi, "masking policy", {
    described,
    list: () => masking.list(),
    get: (name) => masking.get(name),
    create: (body) => masking.create(body),
    update: async (name, change) => {
      const { policy, changed, before } = await masking.update(name, change);
      return {
        view: policy,
        audit: { maskingPolicy: name, changed: changedFields(changed), before: described(before), after: described(policy) },
      };
    },
    remove: (name) => masking.remove(name),
  });
}
