/** The users API (`/api/users`, `/api/user/password`); types from the server's schemas (src/domains/users/schemas.ts). */
import type { NewUserBody, OwnPasswordBody, PasswordAnswer, UserChangeBody, UserView } from "../../src/domains/users/schemas.ts";
import { api } from "../session.ts";
import { resourceApi, useResources } from "./access.ts";

export type User = UserView;

export const usersApi = resourceApi<User, User, NewUserBody, UserChangeBody>("/api/users");

export const useUsers = () => useResources(usersApi);

/** The signed-in user's own password, given the current one. */
export const changeOwnPassword = (body: OwnPasswordBody) =>
  api<PasswordAnswer>("/api/user/password", { method: "PUT", body: JSON.stringify(body) });
