/** The service accounts API (`/api/service-accounts`); types and request schemas from the server's (src/domains/service-accounts/schemas.ts). */
import {
  type CreatedServiceAccount,
  changeAccountBody,
  createAccountBody,
  type NewServiceAccountBody,
  type ServiceAccountView,
} from "../../src/domains/service-accounts/schemas.ts";
import { resourceApi, useResources } from "./access.ts";

export type ServiceAccount = ServiceAccountView;
/** The answer to a creation: the only time the secret leaves the server. */
export type CreatedAccount = CreatedServiceAccount;
export type { NewServiceAccountBody };

export const serviceAccountsApi = resourceApi<ServiceAccount, CreatedAccount, typeof createAccountBody, typeof changeAccountBody>(
  "/api/service-accounts",
  { create: createAccountBody, change: changeAccountBody },
);

export const useServiceAccounts = () => useResources(serviceAccountsApi);
