/** The masking policies API (`/api/masking/policies`); types and request schemas from the server's (src/domains/masking/schemas.ts). */
import {
  changePolicyBody,
  createPolicyBody,
  DEFAULT_REPLACEMENT,
  MASK_METHODS,
  type MaskMethod,
  type NewPolicy,
  type PolicyView,
} from "../../src/domains/masking/schemas.ts";
import { resourceApi, useResources } from "./access.ts";

export type Policy = PolicyView;
export type { MaskMethod, NewPolicy };
export { DEFAULT_REPLACEMENT, MASK_METHODS };

export const policiesApi = resourceApi<Policy, Policy, typeof createPolicyBody, typeof changePolicyBody>("/api/masking/policies", {
  create: createPolicyBody,
  change: changePolicyBody,
});

export const usePolicies = () => useResources(policiesApi);
