// @no-services
/** The dead-code check of `npm test` (scripts/dead-code.ts), on a small tree of its own. */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { findDeadCode } from "../scripts/dead-code.ts";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), "loupe-dead-"));
  dirs.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

describe("dead-code check", () => {
  test("24: reports a file nothing reaches and an export nothing uses; re-exports, namespace and type imports count as uses", () => {
    const root = tree({
      "src/main.ts": 'import { used } from "./lib/index.ts";\nimport * as all from "./all.ts";\nused(all);\n',
      "src/lib/index.ts": 'export * from "./impl.ts";\nexport { unusedThrough } from "./other.ts";\n',
      "src/lib/impl.ts":
        "export function used(x: unknown) { return helper(x); }\nexport function helper(x: unknown) { return x; }\nexport const unused = 1;\n",
      "src/lib/other.ts": "export const unusedThrough = 2;\n",
      "src/all.ts": "export const a = 1;\nexport const b = 2;\n",
      "src/orphan.ts": "export const nobody = 3;\n",
      "ui/main.tsx": 'import type { Shape } from "./types.ts";\nexport const x: Shape = { n: 1 };\n',
      "ui/types.ts": "export interface Shape { n: number }\nexport interface Unused { m: number }\n",
      "test/t.test.ts": 'import { b } from "../src/all.ts";\nvoid b;\n',
    });
    expect(findDeadCode(root)).toEqual({
      files: ["src/orphan.ts"],
      exports: [
        "src/lib/impl.ts: unused",
        "src/lib/index.ts: unusedThrough",
        "src/lib/other.ts: unusedThrough",
        "ui/main.tsx: x",
        "ui/types.ts: Unused",
      ],
    });
  });
});
