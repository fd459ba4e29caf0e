/** The users API (`/api/users`, `/api/user/password`); types and request schemas from the server's (src/domains/users/schemas.ts). */
import {
  changeUserBody,
  createUserBody,
  type NewUserBody,
  type OwnPasswordBody,
  ownPasswordBody,
  type PasswordAnswer,
  type UserView,
} from "../../src/domains/users/schemas.ts";
import { api } from "../session.ts";
import { resourceApi, useResources } from "./access.ts";
import { checked } from "./check.ts";

export type User = UserView;
export type { NewUserBody };
/** What a change of one's own password is checked with, in the form and before it is sent. */
export const ownPasswordSchema = ownPasswordBody;

export const usersApi = resourceApi<User, User, typeof createUserBody, typeof changeUserBody>("/api/users", {
  create: createUserBody,
  change: changeUserBody,
});

export const useUsers = () => useResources(usersApi);

/** The signed-in user's own password, given the current one. */
export const changeOwnPassword = (body: OwnPasswordBody) =>
  api<PasswordAnswer>("/api/user/password", { method: "PUT", body: JSON.stringify(checked(ownPasswordBody, body)) });
