/**
 * Which registry subjects an identity may see and change: a subject follows the scope of the
 * topic it belongs to, by the serializers' naming strategies. Pure: the identity's `Scope` and
 * the configured clusters, no registry, no Kafka.
 *
 * - `<topic>-key`, `<topic>-value` (TopicNameStrategy) and `<topic>-<record name>`
 *   (TopicRecordNameStrategy) belong to `<topic>`. A record name (Avro's, Protobuf's) is
 *   letters, digits and `_` in dotted parts, never `-`, so the topic is everything before the
 *   subject's last `-`: the one split a serializer can have made. No prefix is matched and no
 *   topic list consulted: `a-b-value` is topic `a-b`'s whether a topic `a` exists or not.
 * - Any other subject (RecordNameStrategy's `com.acme.Order`, hand-made names, Confluent's
 *   `:.context:` subjects) belongs to no topic. It may hold the schema of any topic, of any
 *   cluster, so only an identity whose groups grant the role on every topic of every configured
 *   cluster sees it (the reading routes' level) or changes it (`write`).
 * - Seeing is checked on the request's cluster, as every read of a topic is. A change is checked
 *   on every configured cluster: Loupe has one registry, its decoders read every cluster's
 *   records with it, so a subject's schemas are those of its topic on every cluster, and a
 *   writer limited to one cluster must not change another's.
 * - Internal topics keep their rule (see Scope.refusal): their subjects are seen as any topic's
 *   are, and changed by an admin without limits only.
 */
import type { Role } from "../../config/schema.ts";
import type { Scope } from "../access/scope.ts";

const TOPIC_NAME = /^[A-Za-z0-9._-]{1,249}$/;
/** Avro's full name (also Protobuf's): dotted identifiers; `key` and `value` are such names. */
const RECORD_NAME = /^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*$/;

/** The topic a subject belongs to (see the header comment), or undefined when it names none. */
export function subjectTopic(subject: string): string | undefined {
  const at = subject.lastIndexOf("-");
  if (at <= 0) return undefined;
  const topic = subject.slice(0, at);
  if (topic === "." || topic === ".." || !TOPIC_NAME.test(topic) || !RECORD_NAME.test(subject.slice(at + 1))) return undefined;
  return topic;
}

/** A refusal in words, and the topic it concerns (for the audit entry). */
export interface SubjectRefusal {
  message: string;
  topic?: string;
}

const NO_TOPIC = "names no topic (it is not `<topic>-key`, `<topic>-value` or `<topic>-<record name>`)";

/** What one identity may do with the registry's subjects, on the request's cluster. */
export class SubjectAccess {
  readonly #scope: Scope;
  readonly #cluster: string;
  /** The request's cluster first, then the other configured ones. */
  readonly #clusters: string[];

  constructor(scope: Scope, cluster: string, clusters: readonly string[]) {
    this.#scope = scope;
    this.#cluster = cluster;
    this.#clusters = [cluster, ...clusters.filter((c) => c !== cluster)];
  }

  /**
   * Whether the identity's groups grant `role` on every topic of every configured cluster: what
   * subjects of no topic and the global level need. Internal topics do not count here (use
   * "metadata"): they limit the records of their own subjects, checked one by one.
   */
  coversEverything(role: Role): boolean {
    return this.#clusters.every((c) => this.#scope.everyTopic(c, role, "metadata"));
  }

  /** Why the subject may not be seen at `role` (the reading route's level), or undefined. */
  seeRefusal(subject: string, role: Role): SubjectRefusal | undefined {
    const topic = subjectTopic(subject);
    if (topic === undefined)
      return this.coversEverything(role)
        ? undefined
        : { message: `Subject '${subject}' ${NO_TOPIC}: only an identity that sees every topic of every cluster may see it` };
    const refused = this.#scope.refusal(this.#cluster, topic, role);
    return refused ? { message: `Subject '${subject}' belongs to topic '${topic}': ${refused}`, topic } : undefined;
  }

  /** Why the subject may not be changed at `role` (`write`) on every configured cluster, or undefined. */
  changeRefusal(subject: string, role: Role): SubjectRefusal | undefined {
    const topic = subjectTopic(subject);
    if (topic === undefined)
      return this.coversEverything(role)
        ? undefined
        : { message: `Subject '${subject}' ${NO_TOPIC}: only an identity with ${role} on every topic of every cluster may change it` };
    for (const cluster of this.#clusters) {
      const refused = this.#scope.refusal(cluster, topic, role);
      if (!refused) continue;
      const where = cluster === this.#cluster ? "" : ` on cluster '${cluster}' (the registry serves every cluster's topics)`;
      return { message: `Subject '${subject}' belongs to topic '${topic}': ${refused}${where}`, topic };
    }
    return undefined;
  }

  /** The subjects of `names` the identity sees at `role`, in their order: what a list answers. */
  visible(names: readonly string[], role: Role): string[] {
    if (this.coversEverything(role)) return [...names];
    const topics = new Map<string, string | undefined>(names.map((s) => [s, subjectTopic(s)]));
    const named = [...new Set([...topics.values()].filter((t): t is string => t !== undefined))];
    const open = new Set(this.#scope.filterTopics(this.#cluster, named, role));
    return names.filter((s) => {
      const topic = topics.get(s);
      return topic !== undefined && open.has(topic);
    });
  }
}
