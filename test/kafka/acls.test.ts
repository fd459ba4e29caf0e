import { describe, expect, test } from "bun:test";
import type { AclBinding, AclBindingFilter } from "../../src/kafka/index.ts";
import { uniqueTopic } from "../cluster/cluster.ts";
import { eventually, kafkaFixture, rejection } from "./helpers.ts";

const { kafka } = kafkaFixture();

describe("ACLs", () => {
  test("regression: describing right after a change saw the ACLs before it; create, describe with a filter, delete", async () => {
    const resourceName = uniqueTopic("acl");
    const principal = `User:${uniqueTopic("alice")}`;
    const read: AclBinding = {
      resourceType: "TOPIC",
      resourceName,
      patternType: "LITERAL",
      principal,
      host: "*",
      operation: "READ",
      permission: "ALLOW",
    };
    const write: AclBinding = { ...read, operation: "WRITE", permission: "DENY" };
    const prefixed: AclBinding = { ...read, resourceName: `${resourceName}-`, patternType: "PREFIXED", operation: "DESCRIBE" };
    await kafka.acls.create([read, write, prefixed]);

    // ACL changes are committed by the controller and reach the broker's authorizer a moment
    // later: describing right after a change could see the state before it.
    const sortKey = (a: AclBinding) => `${a.patternType}${a.operation}${a.resourceName}`;
    const sorted = (acls: AclBinding[]) => [...acls].sort((a, b) => sortKey(a).localeCompare(sortKey(b)));
    const settlesTo = (filter: AclBindingFilter, expected: AclBinding[]) =>
      eventually(async () => Bun.deepEquals(sorted(await kafka.acls.describe(filter)), sorted(expected)));

    expect(await settlesTo({ principal }, [read, write, prefixed])).toBe(true);
    expect(await kafka.acls.describe({ principal, operation: "WRITE" })).toEqual([write]);
    // MATCH finds the literal and the prefixed ACLs that apply to one topic.
    expect(
      (await kafka.acls.describe({ resourceType: "TOPIC", resourceName: `${resourceName}-x`, patternType: "MATCH", principal })).map(
        (a) => a.operation,
      ),
    ).toEqual(["DESCRIBE"]);

    const deleted = await kafka.acls.delete([{ principal, operation: "READ" }]);
    expect(deleted).toEqual([read]);
    expect(await settlesTo({ principal }, [write, prefixed])).toBe(true);
    await kafka.acls.delete([{ principal }]);
    expect(await settlesTo({ principal }, [])).toBe(true);
  });

  test("names are case-insensitive; unknown ones are BAD_REQUEST", async () => {
    const principal = `User:${uniqueTopic("bob")}`;
    await kafka.acls.create([
      {
        resourceType: "group" as "GROUP",
        resourceName: "g",
        patternType: "Literal" as "LITERAL",
        principal,
        host: "*",
        operation: "Read" as "READ",
        permission: "allow" as "ALLOW",
      },
    ]);
    const created = async () => (await kafka.acls.describe({ principal }))[0];
    expect(await eventually(async () => (await created()) !== undefined)).toBe(true);
    expect(await created()).toMatchObject({ resourceType: "GROUP", operation: "READ", permission: "ALLOW" });
    await kafka.acls.delete([{ principal }]);
    const err = await rejection(kafka.acls.describe({ operation: "FLY" as "READ" }));
    expect(err.code).toBe("BAD_REQUEST");
    expect(err.message).toBe("Unknown ACL operation 'FLY'");
  });
});

describe("quotas", () => {
  test("set, describe, and remove client quotas", async () => {
    const user = uniqueTopic("quser");
    const entity = [{ type: "user" as const, name: user }];
    // Quota changes are committed by the controller and reach the broker a moment later.
    const settlesTo = (expected: unknown) =>
      eventually(async () => Bun.deepEquals(await kafka.quotas.describe([{ type: "user", match: "exact", name: user }]), expected));

    await kafka.quotas.alter([{ entity, values: { producer_byte_rate: 1024, consumer_byte_rate: 2048 } }]);
    expect(await settlesTo([{ entity, values: { producer_byte_rate: 1024, consumer_byte_rate: 2048 } }])).toBe(true);
    await kafka.quotas.alter([{ entity, values: { producer_byte_rate: null } }]);
    expect(await settlesTo([{ entity, values: { consumer_byte_rate: 2048 } }])).toBe(true);
    await kafka.quotas.alter([{ entity, values: { consumer_byte_rate: null } }]);
    expect(await settlesTo([])).toBe(true);

    const bad = await rejection(kafka.quotas.alter([{ entity, values: { producer_byte_rate: -5 } }], { validateOnly: true }));
    expect(bad.code).toBe("BAD_REQUEST");
  });
});
