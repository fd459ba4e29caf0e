/** The service accounts API (`/api/service-accounts`); types from the server's schemas (src/domains/service-accounts/schemas.ts). */
import type {
  CreatedServiceAccount,
  NewServiceAccountBody,
  ServiceAccountChangeBody,
  ServiceAccountView,
} from "../../src/domains/service-accounts/schemas.ts";
import { resourceApi, useResources } from "./access.ts";

export type ServiceAccount = ServiceAccountView;
/** The answer to a creation: the only time the secret leaves the server. */
export type CreatedAccount = CreatedServiceAccount;

export const serviceAccountsApi = resourceApi<ServiceAccount, CreatedAccount, NewServiceAccountBody, ServiceAccountChangeBody>(
  "/api/service-accounts",
);

export const useServiceAccounts = () => useResources(serviceAccountsApi);
