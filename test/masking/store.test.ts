// @no-services
// @postgres
/**
 * Masking policies in the store (migration 0016) on SQLite and PostgreSQL, and whom and what a
 * policy masks: groups, roles, exception groups, topic and field patterns.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Store } from "../../src/db/index.ts";
import { MaskingRepo } from "../../src/domains/masking/repo.ts";
import { MaskingService } from "../../src/domains/masking/service.ts";
import { openTestStore } from "../helpers/store.ts";

let dir: string;
let store: Store;
let masking: MaskingService;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "loupe-masking-"));
  store = await openTestStore(dir);
  masking = new MaskingService(new MaskingRepo(store.db), () => 1_000);
});
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const viewer = (groups: string[], roles: string[] = ["read"]) => ({ name: "v", groups, roles });
const SECRET = { id: 7, ssn: "123-45-6789", card: { number: "4111111111111111" }, list: [{ pin: 1234 }, { pin: 99 }] };

describe("masking policies in the store", () => {
  test("29: a policy is stored, changed and removed; the HASH salt is made once and kept", async () => {
    const created = await masking.create({
      name: "p1",
      topics: ["pay*"],
      fields: ["ssn", "card.number"],
      method: "HASH",
      groups: ["analysts"],
      roles: [],
      exceptGroups: ["trusted"],
    });
    expect(created).toEqual({
      name: "p1",
      topics: ["pay*"],
      fields: ["ssn", "card.number"],
      method: "HASH",
      replacement: null,
      keepLast: null,
      groups: ["analysts"],
      roles: [],
      exceptGroups: ["trusted"],
      createdAt: 1_000,
      updatedAt: 1_000,
    });
    const hashed = (await masking.maskFor(viewer(["analysts"]), "local", "payments"))!.apply(SECRET) as typeof SECRET;
    expect(hashed.ssn).toMatch(/^[0-9a-f]{64}$/);
    expect(hashed.card.number).toMatch(/^[0-9a-f]{64}$/);
    // Another service over the same store hashes alike: one salt per install.
    const again = (await new MaskingService(new MaskingRepo(store.db)).maskFor(viewer(["analysts"]), "local", "payments"))!.apply(SECRET);
    expect(again).toEqual(hashed);
    expect(await store.db.selectFrom("masking_salt").selectAll().execute()).toHaveLength(1);

    const { policy, changed } = await masking.update("p1", { method: "REDACT", replacement: "[hidden]" });
    expect(changed).toEqual(["method", "replacement"]);
    expect(policy).toMatchObject({ method: "REDACT", replacement: "[hidden]", keepLast: null });
    await expect(masking.update("p1", { keepLast: 3 })).rejects.toThrow("keepLast is for KEEP_LAST_N only");
    expect(await masking.list()).toEqual([policy]);
    expect(await masking.remove("p1")).toEqual(policy);
    expect(await masking.list()).toEqual([]);
    await expect(masking.get("p1")).rejects.toThrow("No masking policy named 'p1'");
  });

  test("29: whom a policy masks (groups, highest role, exception groups) and what (topic globs, names at any depth, dotted paths, arrays)", async () => {
    await masking.create({
      name: "p2",
      topics: ["pay*", "cards"],
      fields: ["ssn", "list.p?n", "card.number"],
      method: "KEEP_LAST_N",
      keepLast: 2,
      groups: ["analysts"],
      roles: ["write"],
      exceptGroups: ["trusted"],
    });
    expect(await masking.maskFor(viewer(["analysts"]), "local", "orders")).toBeNull();
    expect(await masking.maskFor(viewer(["analysts", "trusted"]), "local", "payments")).toBeNull();
    expect(await masking.maskFor(viewer([], ["read"]), "local", "payments")).toBeNull();
    // An admin who also holds write somewhere is judged by the highest role.
    expect(await masking.maskFor(viewer([], ["admin", "write"]), "local", "payments")).toBeNull();
    const byRole = await masking.maskFor(viewer([], ["write", "read"]), "local", "cards");
    expect(byRole!.apply(SECRET)).toEqual({
      id: 7,
      ssn: "*********89",
      card: { number: "**************11" },
      list: [{ pin: "**34" }, { pin: "**" }],
    });
    expect(byRole!.apply("text value")).toBe("text value");
    const mask = (await masking.maskFor(viewer(["analysts"]), "local", "payments"))!;
    // A filter path is refused when it is masked, inside a masked field, or a parent of a dotted pattern.
    expect(mask.named(["ssn"])).toBe("ssn");
    expect(mask.named(["deep", "ssn"])).toBe("ssn");
    expect(mask.named(["card", "number", "x"])).toBe("card.number");
    expect(mask.named(["card"])).toBe("card.number");
    expect(mask.named(["id"])).toBeNull();
    expect(mask.named([])).toBeNull();
    await masking.remove("p2");
  });
});
