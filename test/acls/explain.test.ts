// @no-services
import { describe, expect, test } from "bun:test";
import { type AuthorizerFacts, explain, type Question } from "../../src/domains/acls/explain.ts";
import { aclBody, type ExplainReason, explainQuery } from "../../src/domains/acls/schemas.ts";
import { authorizerFacts } from "../../src/domains/acls/service.ts";
import type { AclBinding, ConfigEntry } from "../../src/kafka/index.ts";

const STANDARD = "org.apache.kafka.metadata.authorizer.StandardAuthorizer";
/** The secured test broker: StandardAuthorizer, super users named, nothing allowed by default. */
const FACTS: AuthorizerFacts = {
  authorizerClass: STANDARD,
  superUsers: ["User:admin"],
  superUsersSet: true,
  allowEveryoneIfNoAclFound: false,
};

const acl = (b: Partial<AclBinding>): AclBinding => ({
  resourceType: "TOPIC",
  resourceName: "orders",
  patternType: "LITERAL",
  principal: "User:alice",
  host: "*",
  operation: "READ",
  permission: "ALLOW",
  ...b,
});

const ask = (q: Partial<Question> = {}): Question => ({
  principal: "User:alice",
  resourceType: "TOPIC",
  resourceName: "orders",
  operation: "READ",
  host: null,
  ...q,
});

describe("explain: StandardAuthorizer's rules", () => {
  // [case, bindings, question, facts, allowed, reason, deciding (indexes into the bindings)]
  const cases: Array<[string, AclBinding[], Partial<Question>, Partial<AuthorizerFacts>, boolean | null, ExplainReason, number[]]> = [
    ["a literal ALLOW allows", [acl({})], {}, {}, true, "ALLOW_ACL", [0]],
    ["no binding: denied by default", [], {}, {}, false, "NO_MATCHING_ACL", []],
    ["no binding, allow.everyone.if.no.acl.found=true: allowed", [], {}, { allowEveryoneIfNoAclFound: true }, true, "NO_MATCHING_ACL", []],
    [
      "StandardAuthorizer: a binding for someone else does not stop allow.everyone.if.no.acl.found",
      [acl({ principal: "User:bob" })],
      {},
      { allowEveryoneIfNoAclFound: true },
      true,
      "NO_MATCHING_ACL",
      [],
    ],
    [
      "allow.everyone.if.no.acl.found hidden and not configured: unknown",
      [],
      {},
      { allowEveryoneIfNoAclFound: null },
      null,
      "NO_MATCHING_ACL",
      [],
    ],
    ["a DENY wins over an ALLOW", [acl({}), acl({ permission: "DENY" })], {}, {}, false, "DENY_ACL", [1]],
    [
      "a DENY for User:* wins over a literal ALLOW",
      [acl({}), acl({ principal: "User:*", permission: "DENY", patternType: "PREFIXED", resourceName: "ord" })],
      {},
      {},
      false,
      "DENY_ACL",
      [1],
    ],
    ["a PREFIXED ALLOW covers a longer name", [acl({ patternType: "PREFIXED", resourceName: "ord" })], {}, {}, true, "ALLOW_ACL", [0]],
    [
      "a PREFIXED binding does not cover a shorter name",
      [acl({ patternType: "PREFIXED", resourceName: "orders-eu" })],
      {},
      {},
      false,
      "NO_MATCHING_ACL",
      [],
    ],
    ["a LITERAL binding is not a prefix", [acl({ resourceName: "ord" })], {}, {}, false, "NO_MATCHING_ACL", []],
    ["the wildcard resource '*' covers every name", [acl({ resourceName: "*" })], {}, {}, true, "ALLOW_ACL", [0]],
    [
      "a PREFIXED '*' is a prefix, not the wildcard",
      [acl({ patternType: "PREFIXED", resourceName: "*" })],
      {},
      {},
      false,
      "NO_MATCHING_ACL",
      [],
    ],
    ["User:* is every principal", [acl({ principal: "User:*" })], { principal: "User:carol" }, {}, true, "ALLOW_ACL", [0]],
    ["a principal is matched exactly (case too)", [acl({ principal: "User:Alice" })], {}, {}, false, "NO_MATCHING_ACL", []],
    ["another resource type does not count", [acl({ resourceType: "GROUP" })], {}, {}, false, "NO_MATCHING_ACL", []],
    ["a host-specific binding does not count for an unnamed host", [acl({ host: "10.0.0.1" })], {}, {}, false, "NO_MATCHING_ACL", []],
    ["a host-specific binding counts for that host", [acl({ host: "10.0.0.1" })], { host: "10.0.0.1" }, {}, true, "ALLOW_ACL", [0]],
    [
      "a host-specific DENY does not deny other hosts",
      [acl({}), acl({ host: "10.0.0.1", permission: "DENY" })],
      { host: "10.0.0.2" },
      {},
      true,
      "ALLOW_ACL",
      [0],
    ],
    ["ALL allows every operation", [acl({ operation: "ALL" })], { operation: "DELETE" }, {}, true, "ALLOW_ACL", [0]],
    [
      "a DENY of ALL denies every operation",
      [acl({ operation: "WRITE" }), acl({ operation: "ALL", permission: "DENY" })],
      { operation: "WRITE" },
      {},
      false,
      "DENY_ACL",
      [1],
    ],
    ["READ implies DESCRIBE", [acl({})], { operation: "DESCRIBE" }, {}, true, "ALLOW_ACL", [0]],
    ["WRITE implies DESCRIBE", [acl({ operation: "WRITE" })], { operation: "DESCRIBE" }, {}, true, "ALLOW_ACL", [0]],
    ["DELETE implies DESCRIBE", [acl({ operation: "DELETE" })], { operation: "DESCRIBE" }, {}, true, "ALLOW_ACL", [0]],
    ["ALTER implies DESCRIBE", [acl({ operation: "ALTER" })], { operation: "DESCRIBE" }, {}, true, "ALLOW_ACL", [0]],
    [
      "ALTER_CONFIGS implies DESCRIBE_CONFIGS",
      [acl({ operation: "ALTER_CONFIGS" })],
      { operation: "DESCRIBE_CONFIGS" },
      {},
      true,
      "ALLOW_ACL",
      [0],
    ],
    ["DESCRIBE implies nothing else", [acl({ operation: "DESCRIBE" })], { operation: "READ" }, {}, false, "NO_MATCHING_ACL", []],
    ["CREATE does not imply DESCRIBE", [acl({ operation: "CREATE" })], { operation: "DESCRIBE" }, {}, false, "NO_MATCHING_ACL", []],
    [
      "a DENY of READ does not deny DESCRIBE",
      [acl({ operation: "DESCRIBE" }), acl({ permission: "DENY" })],
      { operation: "DESCRIBE" },
      {},
      true,
      "ALLOW_ACL",
      [0],
    ],
    [
      "a super user is allowed whatever the ACLs say",
      [acl({ principal: "User:admin", permission: "DENY", operation: "ALL" })],
      { principal: "User:admin" },
      {},
      true,
      "SUPER_USER",
      [],
    ],
    ["no authorizer: allowed", [], {}, { authorizerClass: "" }, true, "NO_AUTHORIZER", []],
  ];

  for (const [name, bindings, q, facts, allowed, reason, deciding] of cases) {
    test(name, () => {
      const answer = explain(ask(q), bindings, { ...FACTS, ...facts });
      expect({ allowed: answer.allowed, reason: answer.reason }).toEqual({ allowed, reason });
      expect(answer.deciding).toEqual(
        deciding.map((i) =>
          expect.objectContaining({
            principal: bindings[i]!.principal,
            permissionType: bindings[i]!.permission === "DENY" ? "Deny" : "Allow",
          }),
        ),
      );
      expect(answer.summary.length).toBeGreaterThan(10);
    });
  }

  test("every binding on the resource is listed, most specific first, each saying why it applies or not", () => {
    const answer = explain(
      ask({ resourceName: "orders-eu", operation: "DESCRIBE" }),
      [
        acl({ resourceName: "*", principal: "User:bob" }),
        acl({ resourceName: "orders-", patternType: "PREFIXED", permission: "DENY", operation: "READ" }),
        acl({ resourceName: "orders-eu", operation: "WRITE" }),
        acl({ resourceName: "other" }),
      ],
      FACTS,
    );
    expect(answer.considered.map((b) => [b.patternType, b.resourceName, b.applies, b.why])).toEqual([
      ["LITERAL", "orders-eu", true, "allows Write, which implies Describe to User:alice from any host"],
      ["PREFIXED", "orders-", false, "denies Read only (a DENY implies no other operation)"],
      ["LITERAL", "*", false, "for User:bob only"],
    ]);
    expect(answer).toMatchObject({
      resourceType: "Topic",
      operation: "Describe",
      allowed: true,
      reason: "ALLOW_ACL",
      summary: "An ALLOW binding applies, and no DENY does.",
    });
  });

  test("what Loupe cannot know is said: hidden super users, a hidden default, bindings for hosts", () => {
    const unknown = explain(ask(), [acl({ host: "10.0.0.1" })], {
      ...FACTS,
      superUsers: null,
      superUsersSet: true,
      allowEveryoneIfNoAclFound: null,
    });
    expect(unknown.allowed).toBeNull();
    expect(unknown.caveats.join("\n")).toContain("super.users");
    expect(unknown.caveats.join("\n")).toContain("authorizer.allowEveryoneIfNoAclFound");
    expect(unknown.caveats.join("\n")).toContain("name a host");
    // No super users set on the brokers: nothing to say of them.
    expect(explain(ask(), [], { ...FACTS, superUsers: null, superUsersSet: false }).caveats).toEqual([]);
    // Another authorizer: the answer says whose rules it follows.
    expect(explain(ask(), [acl({})], { ...FACTS, authorizerClass: "com.example.Ranger" }).caveats[0]).toContain("com.example.Ranger");
  });
});

describe("ACL bodies", () => {
  const valid = { resourceType: "Topic", resourceName: "t", principal: "User:a", permissionType: "Allow", host: "*", operation: "Read" };

  test("enums in any case, with or without underscores, answer in the SPEC's spelling", () => {
    for (const [resourceType, operation, permissionType] of [
      ["TOPIC", "DESCRIBE_CONFIGS", "ALLOW"],
      ["topic", "describeconfigs", "allow"],
      ["Topic", "DescribeConfigs", "Allow"],
      ["TOPIC", "DESCRIBECONFIGS", "DENY"],
    ])
      expect(aclBody.parse({ ...valid, resourceType, operation, permissionType })).toMatchObject({
        resourceType: "Topic",
        operation: "DescribeConfigs",
        patternType: "LITERAL",
      });
    expect(aclBody.parse({ ...valid, resourceType: "TRANSACTIONAL_ID", resourceName: "tx", operation: "WRITE" }).resourceType).toBe(
      "TransactionalId",
    );
    expect(aclBody.parse({ ...valid, resourceType: "TRANSACTIONALID", resourceName: "tx", operation: "write" }).resourceType).toBe(
      "TransactionalId",
    );
    expect(aclBody.parse({ ...valid, patternType: "prefixed" }).patternType).toBe("PREFIXED");
  });

  const refusals: Array<[string, Record<string, unknown>, string]> = [
    [
      "an operation not valid for the type, naming the valid ones",
      { resourceType: "Group", operation: "Write" },
      "operation Write is not valid for resourceType Group: one of Read, Describe, Delete, DescribeConfigs, AlterConfigs, All",
    ],
    ["IdempotentWrite on a topic", { operation: "IDEMPOTENT_WRITE" }, "operation IdempotentWrite is not valid for resourceType Topic"],
    [
      "an unknown resource type",
      { resourceType: "Table" },
      "unknown resourceType 'Table': one of Topic, Group, Cluster, TransactionalId, DelegationToken",
    ],
    ["an unknown operation", { operation: "Fly" }, "unknown operation 'Fly'"],
    ["an unknown permission", { permissionType: "Maybe" }, "unknown permissionType 'Maybe': one of Allow, Deny"],
    ["an unknown pattern type", { patternType: "MATCH" }, "unknown patternType 'MATCH': one of LITERAL, PREFIXED"],
    ["a principal without a type", { principal: "alice" }, "principal is '<type>:<name>'"],
    ["a missing host", { host: undefined }, "host is required ('*' for any host)"],
    ["an empty host", { host: "" }, "host is required ('*' for any host)"],
    ["a missing resource name", { resourceName: undefined }, "resourceName is required"],
    ["a missing operation", { operation: undefined }, "operation is required"],
    [
      "a cluster named otherwise",
      { resourceType: "Cluster", resourceName: "c", operation: "Alter" },
      "a Cluster resource is named 'kafka-cluster'",
    ],
    ["a PREFIXED '*'", { resourceName: "*", patternType: "PREFIXED" }, "a PREFIXED resourceName cannot be '*'"],
  ];
  for (const [name, change, message] of refusals) {
    test(`refused: ${name}`, () => {
      const parsed = aclBody.safeParse({ ...valid, ...change });
      expect(parsed.success).toBe(false);
      expect(parsed.error!.issues.map((i) => i.message).join("; ")).toContain(message);
    });
  }

  test("the explain question: the same spellings and checks, host optional", () => {
    expect(explainQuery.parse({ principal: "User:a", resourceType: "TOPIC", resourceName: "t", operation: "describe_configs" })).toEqual({
      principal: "User:a",
      resourceType: "Topic",
      resourceName: "t",
      operation: "DescribeConfigs",
    });
    expect(explainQuery.safeParse({ principal: "User:a", resourceType: "Group", resourceName: "g", operation: "Write" }).success).toBe(
      false,
    );
  });
});

describe("what is known of the brokers' authorizer settings", () => {
  /** A config as DescribeConfigs reports it: a set config Kafka does not define comes hidden (sensitive, no value). */
  const config = (name: string, value: string | null, sensitive = false): ConfigEntry => ({
    name,
    value,
    defaultValue: null,
    isDefault: false,
    source: "STATIC_BROKER_CONFIG",
    type: sensitive ? "UNKNOWN" : "STRING",
    readOnly: true,
    sensitive,
    documentation: null,
    synonyms: [],
  });
  const AUTHORIZER = config("authorizer.class.name", STANDARD);

  test("set on the brokers: hidden, so unknown, unless the cluster's configuration says", () => {
    const hidden = [AUTHORIZER, config("super.users", null, true), config("allow.everyone.if.no.acl.found", null, true)];
    expect(authorizerFacts(hidden, {})).toEqual({
      authorizerClass: STANDARD,
      superUsers: null,
      superUsersSet: true,
      allowEveryoneIfNoAclFound: null,
    });
    expect(authorizerFacts(hidden, { superUsers: ["User:admin"], allowEveryoneIfNoAclFound: true })).toEqual({
      authorizerClass: STANDARD,
      superUsers: ["User:admin"],
      superUsersSet: true,
      allowEveryoneIfNoAclFound: true,
    });
  });

  test("not set on the brokers: Kafka's defaults, no super users and false", () => {
    expect(authorizerFacts([AUTHORIZER], {})).toEqual({
      authorizerClass: STANDARD,
      superUsers: [],
      superUsersSet: false,
      allowEveryoneIfNoAclFound: false,
    });
  });

  test("shown by the brokers (a build that defines them): read as they are", () => {
    const shown = [AUTHORIZER, config("super.users", "User:a; User:b"), config("allow.everyone.if.no.acl.found", "TRUE")];
    expect(authorizerFacts(shown, {})).toMatchObject({ superUsers: ["User:a", "User:b"], allowEveryoneIfNoAclFound: true });
  });

  test("no authorizer, and configs that could not be read", () => {
    expect(authorizerFacts([config("authorizer.class.name", "")], {}).authorizerClass).toBe("");
    expect(authorizerFacts(null, {})).toEqual({
      authorizerClass: null,
      superUsers: null,
      superUsersSet: null,
      allowEveryoneIfNoAclFound: null,
    });
  });
});
