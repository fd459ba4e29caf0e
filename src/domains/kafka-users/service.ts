import { AppError } from "../../errors.ts";
import type { KafkaPool, ScramUser } from "../../kafka/index.ts";
import type { KafkaUserRotation, KafkaUserView, NewKafkaUser } from "./schemas.ts";

/** How long a change may take to show in the brokers' answers before the API answers anyway. */
const SETTLE_MS = 5_000;

/**
 * The cluster's SCRAM users (`/api/kafka-users`): listed, created, given a new password,
 * deleted. Passwords are salted and hashed in Loupe's Kafka client and sent only as such; they
 * are never stored, logged or answered. A change reaches the brokers a moment after it is
 * committed: each waits (up to 5 s) until a broker describes it.
 */
export class KafkaUserService {
  constructor(private readonly pool: KafkaPool) {}

  list(cluster: string): Promise<KafkaUserView[]> {
    return this.pool.get(cluster).scram.describe();
  }

  /** 409 when the user already has a credential of that mechanism (rotate it instead). */
  async create(cluster: string, user: NewKafkaUser): Promise<KafkaUserView> {
    const before = await this.#one(cluster, user.name);
    if (before?.credentials.some((c) => c.mechanism === user.mechanism))
      throw new AppError("CONFLICT", `Kafka user '${user.name}' already has a ${user.mechanism} credential: change its password instead`);
    await this.pool.get(cluster).scram.upsert(user.name, user.mechanism, user.password, user.iterations);
    return this.#settle(cluster, user.name, (u) => u?.credentials.some((c) => c.mechanism === user.mechanism) === true);
  }

  /** A new password (and salt) for an existing credential; 404 when the user has none of that mechanism. */
  async rotate(cluster: string, name: string, change: KafkaUserRotation): Promise<KafkaUserView> {
    const before = await this.#one(cluster, name);
    if (!before?.credentials.some((c) => c.mechanism === change.mechanism))
      throw new AppError("NOT_FOUND", `Kafka user '${name}' has no ${change.mechanism} credential`);
    await this.pool.get(cluster).scram.upsert(name, change.mechanism, change.password, change.iterations);
    return this.#settle(
      cluster,
      name,
      (u) => u?.credentials.some((c) => c.mechanism === change.mechanism && c.iterations === change.iterations) === true,
    );
  }

  /** Deletes every credential of the user, and answers what it had; 404 when it has none. */
  async remove(cluster: string, name: string): Promise<KafkaUserView> {
    const before = await this.#one(cluster, name);
    if (!before) throw new AppError("NOT_FOUND", `Kafka user '${name}' has no SCRAM credential`);
    await this.pool.get(cluster).scram.delete(
      name,
      before.credentials.map((c) => c.mechanism),
    );
    await this.#settle(cluster, name, (u) => u === undefined);
    return before;
  }

  async #one(cluster: string, name: string): Promise<ScramUser | undefined> {
    return (await this.pool.get(cluster).scram.describe([name])).find((u) => u.name === name);
  }

  async #settle(cluster: string, name: string, done: (u: ScramUser | undefined) => boolean): Promise<KafkaUserView> {
    const deadline = Date.now() + SETTLE_MS;
    let user = await this.#one(cluster, name);
    for (let pause = 20; !done(user) && Date.now() < deadline; pause = Math.min(pause * 2, 250)) {
      await Bun.sleep(pause);
      user = await this.#one(cluster, name);
    }
    return user ?? { name, credentials: [] };
  }
}
