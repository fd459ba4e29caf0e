/**
 * The cluster's SCRAM credentials (KIP-554): which users have which mechanisms, and changing
 * them. The password never leaves this process: the client salts and hashes it (RFC 5802's
 * Hi(), which is PBKDF2 with the mechanism's HMAC) and sends only the salt and the result.
 *
 * DescribeUserScramCredentials v0 request: users: [name] (null: all)
 *   response: errorCode, errorMessage, results: [user, errorCode, errorMessage,
 *   credentialInfos: [mechanism int8, iterations int32]]
 * AlterUserScramCredentials v0 request: deletions: [name, mechanism int8],
 *   upsertions: [name, mechanism int8, iterations int32, salt bytes, saltedPassword bytes]
 *   response: results: [user, errorCode, errorMessage]
 */

import { pbkdf2, randomBytes } from "node:crypto";
import { promisify } from "node:util";
import { callApi } from "./client.ts";
import type { KafkaConnection } from "./connection.ts";

export const SCRAM_MECHANISMS = ["SCRAM-SHA-256", "SCRAM-SHA-512"] as const;
export type ScramMechanism = (typeof SCRAM_MECHANISMS)[number];

/** Kafka's numbers for the mechanisms, and the hash each uses. */
const MECHANISM: Record<ScramMechanism, { id: number; hash: "sha256" | "sha512"; bytes: number }> = {
  "SCRAM-SHA-256": { id: 1, hash: "sha256", bytes: 32 },
  "SCRAM-SHA-512": { id: 2, hash: "sha512", bytes: 64 },
};
const mechanismOf = (id: number): ScramMechanism | null => SCRAM_MECHANISMS.find((m) => MECHANISM[m].id === id) ?? null;

export interface ScramUser {
  name: string;
  credentials: Array<{ mechanism: ScramMechanism; iterations: number }>;
}

interface DescribeResponse {
  results: Array<{ user: string; errorCode: number; credentialInfos: Array<{ mechanism: number; iterations: number }> }>;
}

const pbkdf2Async = promisify(pbkdf2);

export class ScramOps {
  readonly #conn: KafkaConnection;

  constructor(conn: KafkaConnection) {
    this.#conn = conn;
  }

  /** The users with SCRAM credentials (all, or those named that have some), by name. */
  describe(names: string[] | null = null): Promise<ScramUser[]> {
    return this.#conn.call("Cannot describe SCRAM users", async () => {
      let answer: DescribeResponse;
      try {
        answer = await callApi<DescribeResponse>(
          this.#conn.admin,
          "DescribeUserScramCredentials",
          null,
          names?.map((name) => ({ name })) ?? null,
        );
      } catch (e) {
        // A named user without credentials is an error of its own in the answer (RESOURCE_NOT_FOUND).
        const response = (e as { response?: DescribeResponse }).response;
        if (!names || !response?.results) throw e;
        answer = response;
      }
      return answer.results
        .filter((r) => r.errorCode === 0)
        .map((r) => ({
          name: r.user,
          credentials: r.credentialInfos
            .flatMap((c) => {
              const mechanism = mechanismOf(c.mechanism);
              return mechanism ? [{ mechanism, iterations: c.iterations }] : [];
            })
            .sort((a, b) => SCRAM_MECHANISMS.indexOf(a.mechanism) - SCRAM_MECHANISMS.indexOf(b.mechanism)),
        }))
        .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    });
  }

  /** Sets the user's credential for the mechanism (a new user, or a new password). */
  upsert(name: string, mechanism: ScramMechanism, password: string, iterations: number): Promise<void> {
    return this.#conn.call(`Cannot set the SCRAM credential of '${name}'`, async () => {
      const m = MECHANISM[mechanism];
      const salt = randomBytes(32);
      const saltedPassword = await pbkdf2Async(password, salt, iterations, m.bytes, m.hash);
      await callApi(this.#conn.admin, "AlterUserScramCredentials", null, [], [{ name, mechanism: m.id, iterations, salt, saltedPassword }]);
    });
  }

  /**
   * Deletes the user's credentials of these mechanisms: one request each, since the brokers
   * refuse a request naming a user twice (DUPLICATE_RESOURCE).
   */
  delete(name: string, mechanisms: readonly ScramMechanism[]): Promise<void> {
    return this.#conn.call(`Cannot delete the SCRAM credentials of '${name}'`, async () => {
      for (const m of mechanisms)
        await callApi(this.#conn.admin, "AlterUserScramCredentials", null, [{ name, mechanism: MECHANISM[m].id }], []);
    });
  }
}
