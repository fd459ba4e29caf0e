import { userOf } from "../../http/context.ts";
import { changedFields, crudApi, crudRoutes } from "../../http/crud.ts";
import { accountName, accountView, changeAccountBody, createAccountBody, createdAccountView, type ServiceAccountView } from "./schemas.ts";
import type { ServiceAccountService } from "./service.ts";

export const serviceAccountApi = crudApi({
  path: "/api/service-accounts",
  noun: "service account",
  tags: ["access"],
  name: accountName,
  view: accountView,
  created: createdAccountView,
  createBody: createAccountBody,
  changeBody: changeAccountBody,
  summaries: {
    list: "Every service account, by name (never their secrets)",
    create: "Create a service account; the answer holds its secret, which is never shown again",
    get: "One service account",
    update: "Change a service account's groups, expiry or disabled flag",
    remove: "Delete (revoke) a service account: its token stops working and its streams close",
  },
  answers: { created: "The account, its secret and its token", updated: "The account after the change", removed: "The account deleted" },
});

/** What an audit entry says of a whole account: never its secret. */
const described = (a: ServiceAccountView) => ({
  serviceAccount: a.name,
  groups: a.groups,
  expiresAt: a.expiresAt,
  disabled: a.disabled,
});

export function serviceAccountRoutes(accounts: ServiceAccountService) {
  return crudRoutes(serviceAccountApi, "service account", {
    described,
    list: () => accounts.list(),
    get: (name) => accounts.get(name),
    create: (body, c) => accounts.create(body, userOf(c)),
    update: async (name, change) => {
      const { account, changed } = await accounts.update(name, change);
      return { view: account, audit: { ...described(account), changed: changedFields(changed) } };
    },
    remove: (name) => accounts.remove(name),
  });
}
