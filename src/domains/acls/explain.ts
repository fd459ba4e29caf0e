/**
 * Whether a principal may do an operation on a resource, and which bindings decide it, by the
 * rules of Kafka's StandardAuthorizer (the KRaft authorizer, `StandardAuthorizerData`):
 *
 *  1. A super user (`super.users`) is allowed everything, whatever the ACLs say.
 *  2. The bindings on the resource are its LITERAL name, the LITERAL wildcard `*`, and every
 *     PREFIXED name the resource's name starts with.
 *  3. One applies when its principal is the principal or `User:*`, its host is the client's or
 *     `*`, and its operation is the one asked, or ALL, or (for an ALLOW only) one that implies
 *     it: READ, WRITE, DELETE and ALTER imply DESCRIBE; ALTER_CONFIGS implies DESCRIBE_CONFIGS.
 *  4. A DENY that applies wins over every ALLOW; else an ALLOW that applies allows.
 *  5. When none applies, `allow.everyone.if.no.acl.found` decides (false by default). Unlike
 *     the ZooKeeper-era AclAuthorizer, StandardAuthorizer asks whether a binding *applies*, not
 *     whether the resource has any.
 *
 * Pure: the bindings and what is known of the brokers' settings are given.
 */
import type { AclBinding } from "../../kafka/index.ts";
import { operationName as opName, resourceTypeName, toEntry } from "./entries.ts";
import type { ConsideredBinding, ExplainReason, Explanation } from "./schemas.ts";

export const WILDCARD_PRINCIPAL = "User:*";

/** What Loupe knows of the brokers' authorizer settings; null where it cannot know. */
export interface AuthorizerFacts {
  /** `authorizer.class.name` as the brokers report it: "" for none, null when it could not be read. */
  authorizerClass: string | null;
  /** The super users, when Loupe's configuration names them; null: unknown. */
  superUsers: readonly string[] | null;
  /** Whether the brokers set `super.users` at all (its value is hidden); null: unknown. */
  superUsersSet: boolean | null;
  /** `allow.everyone.if.no.acl.found`; null when the brokers set it and Loupe's configuration does not say. */
  allowEveryoneIfNoAclFound: boolean | null;
}

/** The question in Kafka's names; `host` null: a host no binding names. */
export interface Question {
  principal: string;
  resourceType: AclBinding["resourceType"];
  resourceName: string;
  operation: AclBinding["operation"];
  host: string | null;
}

type KafkaOperation = AclBinding["operation"];

const IMPLIES: Partial<Record<KafkaOperation, readonly KafkaOperation[]>> = {
  DESCRIBE: ["READ", "WRITE", "DELETE", "ALTER"],
  DESCRIBE_CONFIGS: ["ALTER_CONFIGS"],
};

const STANDARD_AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer";

/** Whether a binding is on the resource asked about: literally, by the wildcard, or by a prefix. */
export function coversResource(b: AclBinding, q: Pick<Question, "resourceType" | "resourceName">): boolean {
  if (b.resourceType !== q.resourceType) return false;
  if (b.patternType === "PREFIXED") return q.resourceName.startsWith(b.resourceName);
  return b.resourceName === q.resourceName || b.resourceName === "*";
}

/** Whether a binding on the resource applies to the question, and why (not). */
export function applies(b: AclBinding, q: Question): { applies: boolean; why: string } {
  const verb = b.permission === "DENY" ? "denies" : "allows";
  if (b.principal !== q.principal && b.principal !== WILDCARD_PRINCIPAL) return { applies: false, why: `for ${b.principal} only` };
  if (b.host !== "*" && b.host !== q.host)
    return { applies: false, why: `only for connections from ${b.host}${q.host === null ? "" : `, not ${q.host}`}` };
  let implied = false;
  if (b.operation !== "ALL" && b.operation !== q.operation) {
    if (b.permission === "DENY") return { applies: false, why: `denies ${opName(b.operation)} only (a DENY implies no other operation)` };
    if (!IMPLIES[q.operation]?.includes(b.operation))
      return { applies: false, why: `allows ${opName(b.operation)}, which does not imply ${opName(q.operation)}` };
    implied = true;
  }
  const who = b.principal === WILDCARD_PRINCIPAL ? "every principal (User:*)" : b.principal;
  const from = b.host === "*" ? "any host" : b.host;
  const what =
    b.operation === "ALL"
      ? `every operation (All)`
      : implied
        ? `${opName(b.operation)}, which implies ${opName(q.operation)}`
        : opName(b.operation);
  return { applies: true, why: `${verb} ${what} to ${who} from ${from}` };
}

/** Literal first, then prefixed by longest prefix, then the wildcard: how an operator reads them. */
function specificity(b: AclBinding): number {
  if (b.patternType === "LITERAL" && b.resourceName !== "*") return 1e9;
  if (b.patternType === "PREFIXED") return b.resourceName.length;
  return -1;
}

export function explain(q: Question, bindings: readonly AclBinding[], facts: AuthorizerFacts): Explanation {
  const onResource = bindings
    .filter((b) => coversResource(b, q))
    .sort((a, b) => specificity(b) - specificity(a) || (a.permission === b.permission ? 0 : a.permission === "DENY" ? -1 : 1));
  const considered: ConsideredBinding[] = onResource.map((b) => ({ ...toEntry(b), ...applies(b, q) }));
  const applying = onResource.filter((_, i) => considered[i]!.applies);
  const denies = applying.filter((b) => b.permission === "DENY");
  const allows = applying.filter((b) => b.permission === "ALLOW");
  const op = opName(q.operation);
  const base = {
    principal: q.principal,
    resourceType: resourceTypeName(q.resourceType),
    resourceName: q.resourceName,
    operation: op,
    host: q.host,
    considered,
  };
  const answer = (allowed: boolean | null, reason: ExplainReason, summary: string, deciding: AclBinding[] = []): Explanation => ({
    ...base,
    allowed,
    reason,
    summary,
    deciding: deciding.map(toEntry),
    caveats: caveats(q, facts, allowed, onResource),
  });

  if (facts.authorizerClass === "")
    return answer(
      true,
      "NO_AUTHORIZER",
      "The brokers have no authorizer (authorizer.class.name is empty): every client may do everything.",
    );
  if (facts.superUsers?.includes(q.principal))
    return answer(true, "SUPER_USER", `${q.principal} is a super user (super.users), allowed everything whatever the ACLs say.`);
  if (denies.length > 0)
    return answer(
      false,
      "DENY_ACL",
      `${cap(count(denies.length, "DENY binding"))} ${denies.length > 1 ? "apply" : "applies"}, and a DENY wins over every ALLOW.`,
      denies,
    );
  if (allows.length > 0)
    return answer(
      true,
      "ALLOW_ACL",
      `${cap(count(allows.length, "ALLOW binding"))} ${allows.length > 1 ? "apply" : "applies"}, and no DENY does.`,
      allows,
    );
  const none = `No binding applies to ${q.principal} for ${op} on ${base.resourceType} ${q.resourceName}`;
  const everyone = facts.allowEveryoneIfNoAclFound;
  if (everyone === null)
    return answer(
      null,
      "NO_MATCHING_ACL",
      `${none}: the brokers' allow.everyone.if.no.acl.found decides, which they set without disclosing its value.`,
    );
  return answer(
    everyone,
    "NO_MATCHING_ACL",
    everyone
      ? `${none}, and allow.everyone.if.no.acl.found is true.`
      : `${none}, and allow.everyone.if.no.acl.found is false (Kafka's default).`,
  );
}

const count = (n: number, what: string) => `${n === 1 ? (/^[AEIOU]/.test(what) ? "an" : "a") : n} ${what}${n === 1 ? "" : "s"}`;
const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

function caveats(q: Question, facts: AuthorizerFacts, allowed: boolean | null, onResource: readonly AclBinding[]): string[] {
  const out: string[] = [];
  if (facts.authorizerClass === null)
    out.push("Loupe could not read the brokers' authorizer.class.name; the answer assumes StandardAuthorizer.");
  else if (facts.authorizerClass !== "" && facts.authorizerClass !== STANDARD_AUTHORIZER)
    out.push(`The brokers use ${facts.authorizerClass}; this answer follows Kafka's StandardAuthorizer, which that authorizer may not.`);
  if (facts.authorizerClass === "") return out;
  if (allowed !== true && facts.superUsers === null && facts.superUsersSet !== false)
    out.push(
      `The brokers${facts.superUsersSet === null ? " may" : ""} set super.users, whose value Kafka does not disclose: if ${q.principal} is listed there it is allowed everything. Name the super users in this cluster's authorizer.superUsers setting to have them counted.`,
    );
  if (allowed === null)
    out.push(
      "The brokers set allow.everyone.if.no.acl.found and Kafka does not disclose its value: set this cluster's authorizer.allowEveryoneIfNoAclFound to what the brokers say.",
    );
  if (q.host === null && onResource.some((b) => b.host !== "*"))
    out.push("Some bindings name a host: they count only when the question names the client's address (host).");
  return out;
}
