// @no-services
/** The UI's one number format (ui/format.ts): what every page writes for counts, sizes and time spans. Table-driven. */
import { describe, expect, test } from "bun:test";
import { bytes, count, duration } from "../../ui/format.ts";

describe("ui/format", () => {
  test.each([
    [0, "0"],
    [1234567, "1,234,567"],
    [null, "—"],
    [undefined, "—"],
  ] as const)("count(%p) is %p", (n, want) => expect(count(n)).toBe(want));

  test.each([
    [0, "0 B"],
    [1023, "1023 B"],
    [1024, "1 KiB"],
    [1536, "1.5 KiB"],
    [262_144, "256 KiB"],
    [268_435_456, "256 MiB"],
    [12_900_000, "12.3 MiB"],
    [null, "—"],
  ] as const)("bytes(%p) is %p", (n, want) => expect(bytes(n)).toBe(want));

  test.each([
    [850, "850 ms"],
    [4_200, "4.2 s"],
    [300_000, "5 min 0 s"],
    [3_600_000 * 3 + 12 * 60_000, "3 h 12 min"],
    [86_400_000 * 2 + 3_600_000 * 3, "2 d 3 h"],
  ] as const)("duration(%p) is %p", (ms, want) => expect(duration(ms)).toBe(want));
});
