/**
 * npm on Node 22 and Node 24 (and Deno through `npm:filch`), as a consumer installs it: the packed tarball
 * `npm install`ed into a throwaway project, run from a TypeScript consumer (`node main.ts`: Node strips the types, in the main
 * thread and in the workers) and a JavaScript one (`node main.mjs`), each running 10k tasks and a fork-join
 * fib whose pieces are stolen. Node 24 is the project's own (`node_modules/.bin/node`); Node 22 is the
 * consumer project's: it installs `node@22` from the npm registry beside filch, as a project that pins its
 * Node does (the repository cannot hold two `node` packages: their bin links collide).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  assertConsumerRan,
  bin,
  CONSUMER_RESULT,
  CONSUMER_RUN_WITH_PRODUCER,
  consumerFiles,
  consumerJsTasks,
  packTarball,
  runCommand,
} from "./_consumer.ts";
import { assert, assertEquals, test, within } from "../_test.ts";

/** The Node 22 the consumer installs (the newest 22.x when this was written; types are stripped by default). */
const NODE_22 = "22.23.3";

const JS_MAIN = `import { move, Pool } from "filch";
const pool = await Pool.create(new URL("./tasks.mjs", import.meta.url), { workers: 2, metrics: true });
${CONSUMER_RUN_WITH_PRODUCER}await pool.close();
console.log("RESULT " + JSON.stringify(${CONSUMER_RESULT}));
`;

test(
  "npm on Node 22 and 24 (a TypeScript and a JavaScript consumer) and Deno through npm:filch: each runs 10k tasks and a stealing fork-join fib from the installed tarball",
  async () => {
    const dir = mkdtempSync(join(tmpdir(), "filch-npm-"));
    try {
      const tarball = await within(packTarball(dir), 120_000, "npm pack");
      const project = join(dir, "project");
      mkdirSync(project);
      writeFileSync(join(project, "package.json"), '{ "name": "consumer", "private": true, "type": "module" }\n');
      const installed = await within(
        runCommand("npm", ["install", "--no-audit", "--no-fund", tarball, `node@${NODE_22}`], project),
        300_000,
        "npm install of the tarball and node@22",
      );
      assertEquals(installed.code, 0, `npm install failed:\n${installed.output.slice(-3000)}`);
      for (const [name, text] of Object.entries(consumerFiles("filch"))) writeFileSync(join(project, name), text);
      writeFileSync(join(project, "tasks.mjs"), consumerJsTasks("filch"));
      writeFileSync(join(project, "main.mjs"), JS_MAIN);
      const nodes: [string, string, string][] = [
        ["Node 22", join(project, "node_modules", "node", "bin", "node"), "v22."],
        ["Node 24", bin("node"), "v24."],
      ];
      // Deno through npm:filch, resolved from the project's node_modules (nodeModulesDir "manual"), with
      // --allow-read only.
      writeFileSync(join(project, "deno.json"), '{ "nodeModulesDir": "manual" }\n');
      const denoDir = join(project, "deno");
      mkdirSync(denoDir);
      for (const [name, text] of Object.entries(consumerFiles("npm:filch"))) writeFileSync(join(denoDir, name), text);
      const deno = await within(
        runCommand(bin("deno"), ["run", "--allow-read", join("deno", "main.ts")], project, { NO_COLOR: "1" }),
        120_000,
        "deno run with npm:filch",
      );
      assertConsumerRan("Deno through npm:filch (--allow-read)", deno);
      for (const [label, node, major] of nodes) {
        const version = await within(runCommand(node, ["--version"], project), 30_000, `${label} --version`);
        assert(version.output.trim().startsWith(major), `${label} is ${version.output.trim()}`);
        for (const main of ["main.ts", "main.mjs"]) {
          const run = await within(runCommand(node, [main], project), 120_000, `${label} ${main}`);
          assertConsumerRan(`${label} (${version.output.trim()}) node ${main}`, run);
        }
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
  600_000,
);
