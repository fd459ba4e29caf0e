// @no-services
/** Condition expressions: the template check, patterns, holds (src/domains/alerts/conditions.ts). */
import { describe, expect, test } from "bun:test";
import { alertDefinition } from "../../src/domains/alerts/catalogue.ts";
import { checkCondition, parseLagCondition, pattern } from "../../src/domains/alerts/conditions.ts";
import { conditionText } from "../../src/domains/alerts/schemas.ts";
import { AppError } from "../../src/errors.ts";

const lag = alertDefinition(2000)!;

describe("lag conditions", () => {
  test.each([
    ["lag >= 100000 on group group and topic topicA", { metric: "lag", threshold: 100000, group: "group", topic: "topicA", holdMs: 0 }],
    [
      "lag-seconds >= 300 on group payments and topic orders",
      { metric: "lag-seconds", threshold: 300, group: "payments", topic: "orders", holdMs: 0 },
    ],
    ["lag >= 5 on group pay-* and topic o? for 30s", { metric: "lag", threshold: 5, group: "pay-*", topic: "o?", holdMs: 30_000 }],
    ["  lag  >=  5 on group g and topic t for 5m ", { metric: "lag", threshold: 5, group: "g", topic: "t", holdMs: 300_000 }],
    ["lag >= 5 on group g and topic t for 2h", { metric: "lag", threshold: 5, group: "g", topic: "t", holdMs: 7_200_000 }],
  ])("%s", (text, want) => {
    const parsed = parseLagCondition(checkCondition(lag, text))!;
    expect({
      metric: parsed.metric as string,
      threshold: parsed.threshold,
      group: parsed.group.text,
      topic: parsed.topic.text,
      holdMs: parsed.holdMs,
    }).toEqual(want);
  });

  test.each([
    "lag > 5 on group g and topic t",
    "lag >= 0 on group g and topic t",
    "lag >= 05 on group g and topic t",
    "lag >= 5 on group g and topic",
    "lag >= 5 on group g and topic t for 5d",
    "lag >= 5 on group g and topic t and more",
    "LAG >= 5 on group g and topic t",
  ])("refused, naming the template: %s", (text) => {
    let err: unknown;
    try {
      checkCondition(lag, text);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).status).toBe(400);
    expect((err as AppError).message).toContain(lag.conditionTemplate!);
  });

  test("the UI's form checks with the request schema the server checks with: the same words, before anything is sent", () => {
    for (const text of ["lag > 5 on group g and topic t", "", "x".repeat(1_001), "lag >= 5 on group g and topic t"]) {
      const form = conditionText(lag).safeParse(text);
      let server: string | undefined;
      try {
        expect(checkCondition(lag, text)).toBe(form.success ? form.data : "");
      } catch (e) {
        server = (e as AppError).message;
      }
      expect(form.success ? undefined : form.error.issues[0]!.message).toBe(server);
    }
    const none = conditionText(alertDefinition(1000)!).safeParse("lag >= 5 on group g and topic t");
    expect(none.success ? "" : none.error.issues[0]!.message).toContain("takes no conditions");
  });

  test("a setting without a template takes none", () => {
    expect(() => checkCondition(alertDefinition(1000)!, "lag >= 5 on group g and topic t")).toThrow("takes no conditions");
  });

  test("patterns: * any characters, ? one, everything else literal", () => {
    expect(pattern("pay-*").matches("pay-eu")).toBe(true);
    expect(pattern("pay-*").matches("pay")).toBe(false);
    expect(pattern("o?").matches("ok")).toBe(true);
    expect(pattern("o?").matches("oks")).toBe(false);
    expect(pattern("a.b").matches("axb")).toBe(false);
    expect(pattern("a.b*").matches("a.b.c")).toBe(true);
    expect(pattern("(x)+").matches("(x)+")).toBe(true);
  });
});
