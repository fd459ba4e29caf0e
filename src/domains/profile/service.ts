import { AppError } from "../../errors.ts";
import type { ProfileRepo } from "./repo.ts";

/** The properties every profile answers, empty or not: the Go client decodes these three. */
export const STANDARD_PROPERTIES = ["topics", "schemas", "transformers"] as const;

/** A user's profile: each property's values, in the order they were added. */
export type Profile = Record<(typeof STANDARD_PROPERTIES)[number], string[]> & Record<string, string[]>;

export interface ProfileLimits {
  /** Values one user may keep, over all properties. */
  maxValues: number;
}

/**
 * Per-user favourites. Property names are free-form (clients invent their own, the Go CLI's
 * example is `newProperty`); adding what is there already and removing what is not both
 * succeed, so a client can repeat either.
 */
export class ProfileService {
  constructor(
    private readonly repo: ProfileRepo,
    private readonly limits: ProfileLimits = { maxValues: 1000 },
    private readonly now: () => number = Date.now,
  ) {}

  async get(user: string): Promise<Profile> {
    const profile: Profile = { topics: [], schemas: [], transformers: [] };
    for (const row of await this.repo.list(user)) (profile[row.property] ??= []).push(row.value);
    return profile;
  }

  async add(user: string, property: string, value: string): Promise<Profile> {
    if (!(await this.repo.add(user, property, value, this.limits.maxValues, this.now())))
      throw new AppError(
        "BAD_REQUEST",
        `The profile of '${user}' holds ${this.limits.maxValues} values, the most it may hold: remove some before adding more`,
      );
    return this.get(user);
  }

  async remove(user: string, property: string, value: string): Promise<Profile> {
    await this.repo.remove(user, property, value);
    return this.get(user);
  }
}
