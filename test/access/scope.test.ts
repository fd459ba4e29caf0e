// @no-services
import { describe, expect, test } from "bun:test";
import { parseConfig } from "../../src/config/load.ts";
import { groupSchema, type Role } from "../../src/config/schema.ts";
import {
  compileScope,
  effectiveRoles,
  type Group,
  globMatch,
  roleCovers,
  Scope,
  topicAllowed,
  topicRoles,
} from "../../src/domains/access/scope.ts";

const group = (name: string, roles: Role[], clusters: string[], allow: string[], deny: string[] = []): Group => ({
  name,
  roles,
  clusters,
  topics: { allow, deny },
});

describe("globMatch", () => {
  const cases: [pattern: string, name: string, want: boolean][] = [
    ["payments.*", "payments.eu", true],
    ["payments.*", "payments.", true],
    ["payments.*", "payments", false],
    ["payments.*", "xpayments.eu", false],
    ["payments.*", "paymentsXeu", false],
    ["payments", "payments", true],
    ["payments", "payments.eu", false],
    ["*.eu", "payments.eu", true],
    ["*.eu", "payments.eu.x", false],
    ["pay?ents", "payments", true],
    ["pay?ents", "payents", false],
    ["pay?ents", "paymments", false],
    ["?", "a", true],
    ["?", "", false],
    ["??", "a", false],
    ["*", "", true],
    ["*", "anything.at-all_1", true],
    ["a*b*c", "abc", true],
    ["a*b*c", "aXXbYYc", true],
    ["a*b*c", "aXXbYY", false],
    ["a*b*c", "acb", false],
    ["a**b", "ab", true],
    ["*a*a*a*a*a*a*a*a*b", "a".repeat(240), false],
    ["*a?", "xab", true],
    ["*-dlq", "orders-dlq", true],
    ["*-dlq", "orders-dlqx", false],
    // Dots, dashes and underscores are literal, never "any character".
    ["a.c", "abc", false],
    ["a_c", "a_c", true],
    // Case matters, as it does in Kafka's topic names.
    ["Payments.*", "payments.eu", false],
  ];
  for (const [pattern, name, want] of cases)
    test(`${pattern} ${want ? "matches" : "does not match"} '${name}'`, () => expect(globMatch(pattern, name)).toBe(want));
});

describe("scope of one identity", () => {
  const payments = group("payments", ["read"], ["prod", "stage"], ["payments.*"], ["payments.secret*"]);
  const ops = group("ops", ["write"], ["*"], ["ops-?", "logs"]);
  const admins = group("admins", ["admin"], ["stage"], ["*"]);
  const empty = group("empty", ["admin"], ["*"], []);

  const cases: [what: string, groups: Group[], cluster: string, topic: string, role: Role | undefined, want: boolean][] = [
    ["allowed by a glob", [payments], "prod", "payments.eu", undefined, true],
    ["outside the allow list", [payments], "prod", "orders", undefined, false],
    ["deny beats allow", [payments], "prod", "payments.secret.keys", undefined, false],
    ["deny of one group does not remove another group's allow", [payments, admins], "stage", "payments.secret.keys", undefined, true],
    ["cluster not named", [payments], "dev", "payments.eu", undefined, false],
    ["cluster * names every cluster", [ops], "anything", "ops-1", undefined, true],
    ["? is exactly one character", [ops], "prod", "ops-12", undefined, false],
    ["role covered by a higher one", [ops], "prod", "logs", "read", true],
    ["role above the group's", [payments], "prod", "payments.eu", "write", false],
    ["union: the other group grants write", [payments, ops], "prod", "logs", "write", true],
    ["empty allow list allows nothing", [empty], "prod", "payments.eu", undefined, false],
    ["no groups allow nothing", [], "prod", "payments.eu", undefined, false],
    ["nodata is covered by read", [payments], "prod", "payments.eu", "nodata", true],
  ];
  for (const [what, groups, cluster, topic, role, want] of cases)
    test(what, () => {
      expect(topicAllowed(groups, cluster, topic, role)).toBe(want);
      // The list form agrees with the single check.
      expect(compileScope(groups).filterTopics(cluster, [topic], role)).toEqual(want ? [topic] : []);
    });

  test("roles of a topic are the union over the groups that allow it", () => {
    expect(topicRoles([payments, ops, admins], "stage", "payments.eu")).toEqual(["admin", "read"]);
    expect(topicRoles([payments, ops, admins], "prod", "payments.eu")).toEqual(["read"]);
    expect(topicRoles([payments, ops, admins], "prod", "ops-a")).toEqual(["write"]);
    expect(topicRoles([payments, ops, admins], "prod", "payments.secret")).toEqual([]);
  });

  test("roles on a cluster are the union over the groups that name it", () => {
    expect(effectiveRoles([payments, ops, admins], "stage")).toEqual(["admin", "write", "read"]);
    expect(effectiveRoles([payments, ops, admins], "prod")).toEqual(["write", "read"]);
    expect(effectiveRoles([payments], "dev")).toEqual([]);
    expect(effectiveRoles([], "prod")).toEqual([]);
  });

  test("role order", () => {
    expect(roleCovers("admin", "nodata")).toBe(true);
    expect(roleCovers("read", "write")).toBe(false);
    expect(roleCovers("nodata", "nodata")).toBe(true);
  });

  test("the compiled form is reused for the same groups and rebuilt when one changes", () => {
    const a = compileScope([payments, ops]);
    expect(compileScope([{ ...payments }, { ...ops }])).toBe(a);
    const changed = compileScope([{ ...payments, roles: ["write"] }, ops]);
    expect(changed).not.toBe(a);
    expect(changed.topicAllowed("prod", "payments.eu", "write")).toBe(true);
  });

  test("10,000 topic names are filtered like one-by-one checks", () => {
    const names = Array.from({ length: 10_000 }, (_, i) =>
      i % 4 === 0 ? `payments.t${i}` : i % 4 === 1 ? `payments.secret${i}` : i % 4 === 2 ? `ops-${i % 10}` : `other.${i}`,
    );
    const groups = [payments, ops, group("globs", ["read"], ["prod"], ["*.1?", "other.*9*"], ["*7"])];
    const scope = new Scope(groups);
    const kept = scope.filterTopics("prod", names);
    expect(kept).toEqual(names.filter((n) => topicAllowed(groups, "prod", n)));
    expect(kept.filter((n) => n.startsWith("payments.secret"))).toEqual([]);
    expect(kept.filter((n) => n.startsWith("payments.t")).length).toBe(2500);
    expect(kept.some((n) => n.startsWith("other.") && n.endsWith("7"))).toBe(false);
    expect(kept.some((n) => n.startsWith("other.") && n.includes("9"))).toBe(true);
  });
});

describe("group schema", () => {
  const valid = { name: "team-a", roles: ["read"], clusters: ["*"], topics: { allow: ["payments.*"], deny: [] } };
  const cases: [what: string, change: Record<string, unknown>, field: string | null][] = [
    ["a valid group", {}, null],
    ["deny may be left out", { topics: { allow: ["a"] } }, null],
    ["empty pattern", { topics: { allow: [""], deny: [] } }, "topics.allow.0"],
    ["pattern longer than a topic name", { topics: { allow: ["a".repeat(250)], deny: [] } }, "topics.allow.0"],
    ["pattern of the longest topic name", { topics: { allow: ["a".repeat(249)], deny: [] } }, null],
    ["regex characters in a pattern", { topics: { allow: ["pay(ments)+"], deny: [] } }, "topics.allow.0"],
    ["too many patterns", { topics: { allow: Array.from({ length: 257 }, (_, i) => `t${i}`), deny: [] } }, "topics.allow"],
    ["bad deny pattern", { topics: { allow: ["a"], deny: ["a b"] } }, "topics.deny.0"],
    ["unknown role", { roles: ["root"] }, "roles.0"],
    ["no roles", { roles: [] }, "roles"],
    ["empty name", { name: "" }, "name"],
    ["name of 101 characters", { name: "a".repeat(101) }, "name"],
    ["name starting with a dot", { name: ".." }, "name"],
    ["name with a slash", { name: "a/b" }, "name"],
    ["bad cluster name", { clusters: ["a b"] }, "clusters.0"],
    ["unknown field", { extra: 1 }, ""],
    ["unknown field in topics", { topics: { allow: [], deny: [], regex: "x" } }, "topics"],
  ];
  for (const [what, change, field] of cases)
    test(what, () => {
      const res = groupSchema.safeParse({ ...valid, ...change });
      if (field === null) expect(res.error?.issues).toBeUndefined();
      else expect(res.error?.issues.map((i) => i.path.join("."))).toContain(field);
    });
});

describe("groups in the config file", () => {
  const g = (name: string, allow = ["a.*"]) => ({ name, roles: ["read"], clusters: ["*"], topics: { allow } });
  const cases: [what: string, groups: unknown, problem: string | null][] = [
    ["no groups", undefined, null],
    ["two groups", [g("a"), g("b")], null],
    ["a duplicate name", [g("a"), g("a")], "groups.1.name: duplicate group 'a'"],
    ["a pattern too long", [g("a", ["x".repeat(250)])], "groups.0.topics.allow.0: a pattern is longer than 249 characters"],
  ];
  for (const [what, groups, problem] of cases)
    test(what, () => {
      const parse = () => parseConfig(groups === undefined ? {} : { groups });
      if (problem === null) expect(parse().groups.length).toBe(Array.isArray(groups) ? groups.length : 0);
      else expect(parse).toThrow(problem);
    });
});
