// @no-services
import { describe, expect, test } from "bun:test";
import { effectiveOf, entriesOf, precedenceOf } from "../../src/domains/quotas/entries.ts";
import { describeTarget, type QuotaTarget, urlOf } from "../../src/domains/quotas/targets.ts";
import type { QuotaEntry as KafkaQuotaEntry } from "../../src/kafka/index.ts";

const kafka = (t: QuotaTarget, values: Record<string, number>): KafkaQuotaEntry => ({
  entity: [
    ...(t.user !== undefined ? [{ type: "user" as const, name: t.user }] : []),
    ...(t.clientId !== undefined ? [{ type: "client-id" as const, name: t.clientId }] : []),
  ],
  values,
});

describe("Kafka entities as the SPEC's entries", () => {
  test.each([
    [{ user: "u", clientId: "c" }, "USERCLIENT", "u", "c", "/api/quotas/users/u/clients/c"],
    [{ user: "u", clientId: null }, "USERS", "u", undefined, "/api/quotas/users/u/clients"],
    [{ user: "u" }, "USER", "u", undefined, "/api/quotas/users/u"],
    [{ user: null, clientId: "c" }, "USERCLIENT", "<default>", "c", "/api/quotas/users/%3Cdefault%3E/clients/c"],
    [{ user: null, clientId: null }, "USERS", "<default>", undefined, "/api/quotas/users/%3Cdefault%3E/clients"],
    [{ user: null }, "USERS DEFAULT", "<default>", undefined, "/api/quotas/users"],
    [{ clientId: "c" }, "CLIENT", "c", undefined, "/api/quotas/clients/c"],
    [{ clientId: null }, "CLIENTS DEFAULT", "<default>", undefined, "/api/quotas/clients"],
    [{ user: "a/b c", clientId: "x?y" }, "USERCLIENT", "a/b c", "x?y", "/api/quotas/users/a%2Fb%20c/clients/x%3Fy"],
  ] as const)("%j: %s %s %s at %s", (target, entityType, entityName, child, url) => {
    expect(describeTarget(target)).toEqual({ entityType, entityName, ...(child !== undefined ? { child } : {}) });
    expect(urlOf(target)).toBe(url);
  });

  test("values are strings; IP entries, and entries with none of the SPEC's constraints, are left out", () => {
    const list = entriesOf(
      [
        kafka({ user: "u" }, { producer_byte_rate: 1024, request_percentage: 12.5, controller_mutation_rate: 3 }),
        { entity: [{ type: "ip", name: "10.0.0.1" }], values: { connection_creation_rate: 5 } },
        kafka({ clientId: "c" }, { controller_mutation_rate: 3 }),
      ],
      false,
    );
    expect(list).toEqual([
      {
        entityType: "USER",
        entityName: "u",
        properties: { producer_byte_rate: "1024", request_percentage: "12.5" },
        url: "/api/quotas/users/u",
        isAuthorized: false,
      },
    ]);
  });
});

describe("precedence (Kafka's DefaultQuotaCallback order)", () => {
  test.each([
    [{ user: "u", clientId: "c" }, 1],
    [{ user: "u", clientId: null }, 2],
    [{ user: "u" }, 3],
    [{ user: null, clientId: "c" }, 4],
    [{ user: null, clientId: null }, 5],
    [{ user: null }, 6],
    [{ clientId: "c" }, 7],
    [{ clientId: null }, 8],
    [{ user: "v", clientId: "c" }, null],
    [{ user: "u", clientId: "d" }, null],
    [{ user: "v" }, null],
    [{ clientId: "d" }, null],
    [{ user: null, clientId: "d" }, null],
  ] as const)("%j for user u, client c: %p", (target, want) => {
    expect(precedenceOf(target, "u", "c")).toBe(want);
  });

  test("each constraint from the highest entry that sets it; an entry without it hides nothing", () => {
    const e = effectiveOf(
      [
        kafka({ clientId: null }, { producer_byte_rate: 8, consumer_byte_rate: 8, request_percentage: 8 }),
        kafka({ user: "u", clientId: "c" }, { consumer_byte_rate: 1 }),
        kafka({ user: null }, { producer_byte_rate: 6 }),
        kafka({ user: "u", clientId: "other" }, { producer_byte_rate: 99 }),
      ],
      "u",
      "c",
    );
    expect(e.matching.map((m) => m.precedence)).toEqual([1, 6, 8]);
    expect(e.quotas.map((q) => [q.property, q.value, q.source?.precedence, q.sharedBy])).toEqual([
      ["producer_byte_rate", "6", 6, "every client id of this user"],
      ["consumer_byte_rate", "1", 1, "this user and client id"],
      ["request_percentage", "8", 8, "every user of this client id"],
    ]);
  });

  test("no entry: every constraint unlimited", () => {
    expect(effectiveOf([], "u", "c").quotas.every((q) => q.value === null && q.source === null && q.sharedBy === null)).toBe(true);
  });
});
