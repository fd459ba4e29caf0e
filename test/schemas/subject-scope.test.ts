// @no-services
/** Which topic a registry subject belongs to, and what a scope lets an identity do with it (pure). */
import { describe, expect, test } from "bun:test";
import { InternalTopics } from "../../src/domains/access/internal-topics.ts";
import { compileScope, type Group } from "../../src/domains/access/scope.ts";
import { SubjectAccess, subjectTopic } from "../../src/domains/schemas/subject-scope.ts";

describe("subjectTopic", () => {
  const cases: Array<[string, string | undefined, string]> = [
    ["orders-value", "orders", "TopicNameStrategy, value"],
    ["orders-key", "orders", "TopicNameStrategy, key"],
    ["a-b-value", "a-b", "the last '-' splits: never topic 'a'"],
    ["in.eu-orders-com.acme.Order", "in.eu-orders", "TopicRecordNameStrategy"],
    ["orders-Order", "orders", "a record name without namespace"],
    ["com.acme.Order", undefined, "RecordNameStrategy: no topic"],
    ["orders", undefined, "no '-'"],
    ["-value", undefined, "an empty topic"],
    ["orders-", undefined, "nothing after the '-'"],
    ["orders-value ", undefined, "a space after the name"],
    ["orders-order created", undefined, "not a record name"],
    ["orders-1abc", undefined, "a record name cannot start with a digit"],
    ["orders-com..Order", undefined, "an empty name part"],
    [":.ctx:orders-value", undefined, "a Confluent context: not a topic name"],
    ["a/b-value", undefined, "'/' is no topic character"],
    ["..-value", undefined, "'..' is no topic name"],
    [`${"t".repeat(249)}-value`, "t".repeat(249), "the longest topic name"],
    [`${"t".repeat(250)}-value`, undefined, "longer than a topic name may be"],
  ];
  for (const [subject, topic, why] of cases)
    test(`${subject.length > 40 ? `${subject.length} characters` : JSON.stringify(subject)}: ${why}`, () =>
      expect(subjectTopic(subject)).toBe(topic));
});

describe("SubjectAccess", () => {
  const group = (name: string, roles: Group["roles"], clusters: string[], allow: string[], deny: string[] = []): Group => ({
    name,
    roles,
    clusters,
    topics: { allow, deny },
  });
  const internal = new InternalTopics();
  const access = (groups: Group[], clusters = ["a"]) => new SubjectAccess(compileScope(groups, internal), "a", clusters);

  test("a scoped writer sees and changes its topics' subjects only; lists are filtered", () => {
    const w = access([group("w", ["write"], ["*"], ["in.*"])]);
    expect(w.seeRefusal("in.x-value", "nodata")).toBeUndefined();
    expect(w.changeRefusal("in.x-value", "write")).toBeUndefined();
    expect(w.changeRefusal("out.x-value", "write")).toEqual({
      message: "Subject 'out.x-value' belongs to topic 'out.x': Topic 'out.x' is outside your scope",
      topic: "out.x",
    });
    expect(w.seeRefusal("com.acme.Order", "nodata")?.message).toContain("names no topic");
    expect(w.coversEverything("write")).toBe(false);
    expect(w.visible(["out.x-value", "in.x-key", "com.acme.Order", "in.y-com.acme.Order"], "nodata")).toEqual([
      "in.x-key",
      "in.y-com.acme.Order",
    ]);
  });

  test("every topic of every configured cluster, nothing denied, is everything", () => {
    expect(access([group("all", ["write"], ["a"], ["*"])]).coversEverything("write")).toBe(true);
    expect(access([group("all", ["write"], ["a"], ["*"])], ["a", "b"]).coversEverything("write")).toBe(false);
    expect(access([group("all", ["write"], ["*"], ["*"], ["x"])]).coversEverything("write")).toBe(false);
    expect(access([group("all", ["read"], ["*"], ["*"])]).coversEverything("write")).toBe(false);
  });

  test("a change is checked on every cluster, the request's first", () => {
    const a = access([group("w", ["write"], ["a"], ["in.*"]), group("r", ["read"], ["b"], ["in.*"])], ["b", "a"]);
    expect(a.seeRefusal("in.x-value", "nodata")).toBeUndefined();
    expect(a.changeRefusal("in.x-value", "write")?.message).toBe(
      "Subject 'in.x-value' belongs to topic 'in.x': Topic 'in.x' is outside your scope on cluster 'b' (the registry serves every cluster's topics)",
    );
  });

  test("an internal topic's subject: seen by its groups, changed by an admin without limits", () => {
    const writer = access([group("w", ["write"], ["*"], ["*"])]);
    expect(writer.seeRefusal("__consumer_offsets-value", "nodata")).toBeUndefined();
    expect(writer.changeRefusal("__consumer_offsets-value", "write")?.message).toContain("internal to Kafka");
    expect(access([group("a", ["admin"], ["*"], ["*"])]).changeRefusal("__consumer_offsets-value", "write")).toBeUndefined();
  });
});
