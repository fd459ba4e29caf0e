// @no-services
// @postgres
/**
 * The general lease on the store (src/db/lease.ts): one holder at a time, renewed by its holder,
 * taken over by another once expired; time is the store's clock, or an injected one here.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Store } from "../../src/db/index.ts";
import { Leases, type LeaseTable } from "../../src/db/lease.ts";
import { Background, periodicJob } from "../../src/util/background.ts";
import { openTestStore } from "../helpers/store.ts";

const opened: Array<{ store: Store; dir: string }> = [];
async function store(): Promise<Store> {
  const dir = mkdtempSync(join(tmpdir(), "loupe-lease-"));
  const s = await openTestStore(dir);
  opened.push({ store: s, dir });
  return s;
}
afterEach(async () => {
  for (const { store: s, dir } of opened.splice(0)) {
    await s.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

describe("24.4: a general lease on the store's clock", () => {
  test("24.4: acquire, renew, expire and take over, on an injected clock", async () => {
    const s = await store();
    let now = 1_000_000;
    const leases = new Leases(s.db, { clock: () => now });
    const job = ["alerts-evaluation"];
    expect(await leases.holder(job)).toBeNull();
    // Free: taken.
    expect(await leases.acquire(job, "a", 10_000)).toBe(1_010_000);
    expect(await leases.holder(job)).toEqual({ holder: "a", until: 1_010_000 });
    // Held: refused to another, renewed by its holder.
    now += 9_000;
    expect(await leases.acquire(job, "b", 10_000)).toBeNull();
    expect(await leases.acquire(job, "a", 10_000)).toBe(1_019_000);
    // At its expiry it still holds; past it, it is taken over.
    now = 1_019_000;
    expect(await leases.acquire(job, "b", 10_000)).toBeNull();
    now += 1;
    expect(await leases.holder(job)).toBeNull();
    expect(await leases.acquire(job, "b", 10_000)).toBe(1_029_001);
    expect(await leases.holder(job)).toEqual({ holder: "b", until: 1_029_001 });
    // The one that lost it cannot renew it.
    expect(await leases.acquire(job, "a", 10_000)).toBeNull();
    // Released by another: nothing; by its holder: free at once.
    await leases.release(job, "a");
    expect((await leases.holder(job))?.holder).toBe("b");
    await leases.release(job, "b");
    expect(await leases.holder(job)).toBeNull();
    expect(await leases.acquire(job, "a", 10_000)).toBe(now + 10_000);
    // Other names are other leases.
    expect(await leases.acquire(["housekeeping"], "b", 5_000)).toBe(now + 5_000);
  });

  test("24.4: instances asking at once: one wins", async () => {
    const s = await store();
    const leases = new Leases(s.db, { clock: () => 5_000 });
    const won = await Promise.all(["a", "b", "c", "d"].map((who) => leases.acquire(["job"], who, 1_000)));
    expect(won.filter((w) => w !== null)).toHaveLength(1);
  });

  test("24.4: without an injected clock the store's clock is used", async () => {
    const s = await store();
    const leases = new Leases(s.db);
    const before = Date.now();
    const storeNow = await leases.now();
    const until = await leases.acquire(["job"], "a", 60_000);
    const after = Date.now();
    // The store runs on this machine here: its clock reads as this process's, to the millisecond.
    expect(storeNow).toBeGreaterThanOrEqual(before - 1);
    expect(storeNow).toBeLessThanOrEqual(after + 1);
    expect(until).toBeGreaterThanOrEqual(before + 60_000 - 1);
    expect(until).toBeLessThanOrEqual(after + 60_000 + 1);
  });

  test("24.4: rows of another table as leases (a processor's runner slots), on the same rule", async () => {
    const s = await store();
    await s.db
      .insertInto("processors")
      .values({
        id: "p",
        name: "p",
        cluster: "c",
        sql: "s",
        runners: 2,
        desired: "RUNNING",
        owner: "o",
        source_topic: "a",
        target_topic: "b",
        created_at: 0,
        updated_at: 0,
      })
      .execute();
    for (const r of [0, 1])
      await s.db
        .insertInto("processor_runners")
        .values({ processor_id: "p", runner: r, lease_until: 0, state: "PENDING", updated_at: 0 })
        .execute();
    const table: LeaseTable = {
      table: "processor_runners",
      key: ["processor_id", "runner"],
      holder: "instance",
      until: "lease_until",
      createRows: false,
    };
    let now = 100;
    const leases = new Leases(s.db, { table, clock: () => now });
    expect(await leases.acquire(["p", 0], "a", 10)).toBe(110);
    expect(await leases.acquire(["p", 1], "b", 10)).toBe(110);
    expect(await leases.acquire(["p", 0], "b", 10)).toBeNull();
    now = 111;
    expect(await leases.acquire(["p", 0], "b", 10)).toBe(121);
    // A slot that does not exist is not created.
    expect(await leases.acquire(["p", 2], "a", 10)).toBeNull();
    expect(await s.db.selectFrom("processor_runners").select(["runner", "instance", "lease_until"]).orderBy("runner").execute()).toEqual([
      { runner: 0, instance: "b", lease_until: 121 },
      { runner: 1, instance: "b", lease_until: 110 },
    ]);
  });
});

describe("24.4: one instance of those sharing the store runs a job", () => {
  test("24.4: a periodic job elected by the lease runs on its holder only, and moves when the holder stops renewing", async () => {
    const s = await store();
    let now = 0;
    const leases = new Leases(s.db, { clock: () => now });
    const ran: string[] = [];
    const instance = (name: string) =>
      periodicJob("alert-evaluation", 60_000, () => void ran.push(name), {
        elected: async () => (await leases.acquire(["alert-evaluation"], name, 30_000)) !== null,
      });
    const a = new Background();
    a.register(instance("a"));
    const b = new Background();
    b.register(instance("b"));
    await a.start();
    await b.start();
    expect(ran).toEqual(["a"]);
    expect(b.status()[0]).toMatchObject({ running: true, lastRunAt: null, lastErrorAt: null });
    // a stops (it died: no release); once its lease expires, b's next run takes it over.
    await a.stop();
    now = 30_001;
    await b.stop();
    await b.start();
    expect(ran).toEqual(["a", "b"]);
    await b.stop();
  });
});
