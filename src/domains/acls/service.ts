import { AppError } from "../../errors.ts";
import type { AclBinding, ConfigEntry, KafkaPool } from "../../kafka/index.ts";
import type { TopicFilter } from "../topics/visibility.ts";
import { described, sortEntries, toBinding, toEntry } from "./entries.ts";
import { type AuthorizerFacts, explain } from "./explain.ts";
import { type AclBody, type AclEntry, type ExplainQuery, type Explanation, OPERATIONS, RESOURCE_TYPES } from "./schemas.ts";

/** What a cluster's configuration says of its brokers' authorizer, which Kafka does not disclose. */
export interface AuthorizerSettings {
  superUsers?: string[];
  allowEveryoneIfNoAclFound?: boolean;
}

/** How long a change may take to show in the brokers' answers before the API answers anyway. */
const SETTLE_MS = 5_000;

/**
 * The cluster's ACLs (`/api/acl`): listed, created and deleted one binding at a time, and the
 * question "may this principal do this?" answered from them (explain.ts).
 *
 * A change is committed by the controller and reaches the brokers' authorizers a moment later;
 * create and remove wait (up to 5 s) until the broker answers with it, so that a list right
 * after a change shows it and a client is allowed or denied by then.
 */
export class AclService {
  constructor(
    private readonly pool: KafkaPool,
    private readonly settings: (cluster: string) => AuthorizerSettings | undefined = () => undefined,
  ) {}

  /**
   * Every binding; with a topic filter (a caller limited to some topics), only the literal
   * bindings of the topics it lets through: a prefixed or wildcard binding, or one on a group or
   * the cluster, would tell of what lies outside the caller's scope.
   */
  async list(cluster: string, visible: TopicFilter = null): Promise<AclEntry[]> {
    const bindings = await this.pool
      .get(cluster)
      .acls.describe(visible === null ? {} : { resourceType: "TOPIC", patternType: "LITERAL" })
      .catch((e) => {
        throw withoutAuthorizer(e, "Cannot list ACLs");
      });
    const shown = visible === null ? bindings : bindings.filter((b) => b.resourceName !== "*" && visible(b.resourceName));
    return sortEntries(shown.map(toEntry));
  }

  /** Creates the binding (nothing changes when it exists) and answers it. */
  async create(cluster: string, body: AclBody): Promise<AclEntry> {
    const binding = toBinding(body);
    const kafka = this.pool.get(cluster);
    await kafka.acls.create([binding]).catch((e) => {
      throw withoutAuthorizer(e, "Cannot create the ACL");
    });
    await this.#settle(cluster, binding, true);
    return toEntry(binding);
  }

  /** Deletes exactly this binding; 404 when the cluster has no such binding. */
  async remove(cluster: string, body: AclBody): Promise<AclEntry> {
    const binding = toBinding(body);
    const deleted = await this.pool
      .get(cluster)
      .acls.delete([binding])
      .catch((e) => {
        throw withoutAuthorizer(e, "Cannot delete the ACL");
      });
    if (deleted.length === 0)
      throw new AppError("NOT_FOUND", `The ACL does not exist: ${Object.values(described(body)).join(" ")}`, { details: described(body) });
    await this.#settle(cluster, binding, false);
    return toEntry(binding);
  }

  async explain(cluster: string, q: ExplainQuery): Promise<Explanation> {
    const question = {
      principal: q.principal,
      resourceType: RESOURCE_TYPES[q.resourceType],
      resourceName: q.resourceName,
      operation: OPERATIONS[q.operation],
      host: q.host ?? null,
    };
    const kafka = this.pool.get(cluster);
    let bindings: AclBinding[];
    try {
      bindings = await kafka.acls.describe({ resourceType: question.resourceType, resourceName: q.resourceName, patternType: "MATCH" });
    } catch (e) {
      if (!isSecurityDisabled(e)) throw e;
      return explain(question, [], { authorizerClass: "", superUsers: null, superUsersSet: null, allowEveryoneIfNoAclFound: null });
    }
    return explain(question, bindings, await this.#facts(cluster));
  }

  /** What is known of the brokers' authorizer settings (authorizerFacts), from a broker's configs and the cluster's configuration. */
  async #facts(cluster: string): Promise<AuthorizerFacts> {
    const entries = await this.pool
      .get(cluster)
      .configs.knownBrokerConfigs(null)
      .catch((): ConfigEntry[] | null => null);
    return authorizerFacts(entries, this.settings(cluster) ?? {});
  }

  /** Waits until the broker lists the binding (`present`) or no longer does, for up to SETTLE_MS. */
  async #settle(cluster: string, binding: AclBinding, present: boolean): Promise<void> {
    const kafka = this.pool.get(cluster);
    const deadline = Date.now() + SETTLE_MS;
    for (let pause = 20; Date.now() < deadline; pause = Math.min(pause * 2, 250)) {
      const found = await kafka.acls.describe(binding).catch(() => null);
      if (found !== null && found.length > 0 === present) return;
      await Bun.sleep(pause);
    }
  }
}

function isSecurityDisabled(e: unknown): boolean {
  return e instanceof AppError && (e.details as { kafkaError?: string } | undefined)?.kafkaError === "SECURITY_DISABLED";
}

/**
 * The brokers keep no ACLs without an authorizer. The Go client's CLI says "no authorizer is
 * configured on the broker" for a 400 on the list; the message says so in those words.
 */
function withoutAuthorizer(e: unknown, context: string): unknown {
  if (!isSecurityDisabled(e)) return e;
  return new AppError(
    "BAD_REQUEST",
    `${context}: no authorizer is configured on the broker (authorizer.class.name is empty), so it keeps no ACLs`,
    { details: (e as AppError).details },
  );
}

/**
 * What is known of the brokers' authorizer settings, from one broker's configs (null: they could
 * not be read) and what the cluster's configuration says. `super.users` and
 * `allow.everyone.if.no.acl.found` are not configs Kafka defines, so DescribeConfigs reports
 * them, when set, as hidden values: the configuration says what they are; without it a set one
 * is unknown (null) and an unset one is Kafka's default (no super users, false).
 */
export function authorizerFacts(entries: readonly ConfigEntry[] | null, configured: AuthorizerSettings): AuthorizerFacts {
  const entry = (name: string) => entries?.find((e) => e.name === name);
  const visible = (name: string) => {
    const e = entry(name);
    return e && !e.sensitive && e.value !== null ? e.value : undefined;
  };
  /** The value as the brokers show it; the default when they do not set it; null when set but hidden. */
  const known = <T>(name: string, parse: (v: string) => T, unset: T): T | null => {
    const v = visible(name);
    if (v !== undefined) return parse(v);
    return entries !== null && entry(name) === undefined ? unset : null;
  };
  return {
    authorizerClass: entries === null ? null : (visible("authorizer.class.name") ?? ""),
    superUsers:
      configured.superUsers ??
      known(
        "super.users",
        (v) =>
          v
            .split(";")
            .map((u) => u.trim())
            .filter(Boolean),
        [] as string[],
      ),
    superUsersSet: entries === null ? null : entry("super.users") !== undefined,
    allowEveryoneIfNoAclFound:
      configured.allowEveryoneIfNoAclFound ?? known("allow.everyone.if.no.acl.found", (v) => v.trim().toLowerCase() === "true", false),
  };
}
