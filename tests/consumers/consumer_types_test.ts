/**
 * The npm package's types, from a TypeScript consumer that installed the packed tarball: strict, with
 * `skipLibCheck` off (every `.d.ts` of the package is checked), and with neither the DOM library nor
 * `@types/node` (`lib: ["es2022", "esnext.disposable"]`, `types: []`): the package's declarations must not
 * lean on either. Task names and argument types are checked through the task module's types: a wrong
 * argument is a compile error (the control that shows the check can fail).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bin, packTarball, runCommand } from "./_consumer.ts";
import { assert, assertEquals, test, within } from "../_test.ts";

const TSCONFIG = {
  compilerOptions: {
    target: "es2022",
    module: "nodenext",
    moduleResolution: "nodenext",
    strict: true,
    noEmit: true,
    skipLibCheck: false,
    allowImportingTsExtensions: true,
    lib: ["es2022", "esnext.disposable"],
    types: [],
  },
  files: ["main.ts"],
};

const TASKS = `import { currentTask } from "filch";
export function add(a: number, b: number): number {
  return a + b;
}
export function square(n: number): number {
  currentTask()?.signal.throwIfAborted();
  return n * n;
}
`;

function main(call: string, mapped = `"square"`): string {
  return `import { join, Pool, type PoolOptions } from "filch";
import type * as tasks from "./tasks.ts";
const options: PoolOptions = { workers: 2, maxQueue: "auto" };
await using pool = await Pool.create<typeof tasks>("file:///tasks.ts", options);
const sum: number = await ${call};
void sum;
void join;
const timed: number = await pool.with({ timeout: 5, queueTimeout: 5 }).run("add", 1, 2);
void timed;
for await (const square of pool.map(${mapped}, [1, 2], { concurrency: 2, ordered: false })) {
  const n: number = square;
  void n;
}
await pool.waitForRoom();
`;
}

test(
  "a strict TypeScript consumer of the packed tarball type-checks with neither DOM nor @types/node, and a wrong task argument is a compile error",
  async () => {
    const dir = mkdtempSync(join(tmpdir(), "filch-types-"));
    try {
      const tarball = await within(packTarball(dir), 120_000, "npm pack");
      writeFileSync(join(dir, "package.json"), '{ "name": "consumer", "private": true, "type": "module" }\n');
      const installed = await within(
        runCommand("npm", ["install", "--no-audit", "--no-fund", "--offline", tarball], dir),
        120_000,
        "npm install of the tarball",
      );
      assertEquals(installed.code, 0, `npm install of the tarball failed:\n${installed.output.slice(-3000)}`);
      writeFileSync(join(dir, "tsconfig.json"), JSON.stringify(TSCONFIG, null, 2));
      writeFileSync(join(dir, "tasks.ts"), TASKS);

      writeFileSync(join(dir, "main.ts"), main(`pool.run("add", 1, 2)`));
      const good = await within(runCommand(bin("tsc"), ["-p", "."], dir), 120_000, "tsc");
      assertEquals(good.code, 0, `tsc failed on a correct consumer:\n${good.output.slice(-3000)}`);

      // A task of two arguments cannot be mapped (map passes one): a compile error too.
      writeFileSync(join(dir, "main.ts"), main(`pool.run("add", 1, 2)`, `"add"`));
      const unary = await within(runCommand(bin("tsc"), ["-p", "."], dir), 120_000, "tsc");
      assert(
        unary.code !== 0 && unary.output.includes("main.ts(10,"),
        `tsc must reject map of a two-argument task (main.ts line 10); exit ${unary.code}:\n${
          unary.output.slice(-3000)
        }`,
      );

      writeFileSync(join(dir, "main.ts"), main(`pool.run("add", 1, "2")`));
      const bad = await within(runCommand(bin("tsc"), ["-p", "."], dir), 120_000, "tsc");
      assert(
        bad.code !== 0 && bad.output.includes("main.ts(5,") && bad.output.includes("TS2345"),
        `tsc must reject a string where add takes a number (TS2345 at main.ts line 5); exit ${bad.code}:\n${
          bad.output.slice(-3000)
        }`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
  300_000,
);
