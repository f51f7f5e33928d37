// The npm build: `tsc -p tsconfig.build.json` emits dist/ (JavaScript and declarations, JSDoc kept), then
// the JSDoc examples that import "@filch/filch" — the name `deno add jsr:@filch/filch` maps, which the
// sources' examples use so that `deno test --doc` runs them against this package — are rewritten to import
// "filch", the npm package's name, so that an editor's hover shows an npm user an import they can resolve.
// Only import specifiers inside comment lines are rewritten; code imports nothing by that name.
//
// Run by `npm run build` and `npm pack` (prepack), and by tests/run_all.ts. Plain JavaScript, so that any
// Node from 20 runs it. Prints what it rewrote; exits non-zero if tsc fails.
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const tsc = join(root, "node_modules", ".bin", process.platform === "win32" ? "tsc.cmd" : "tsc");
const built = spawnSync(tsc, ["-p", join(root, "tsconfig.build.json")], { stdio: "inherit" });
if (built.status !== 0) {
  console.error(`npm build: tsc failed (${built.error ?? `exit ${built.status}`})`);
  process.exit(built.status ?? 1);
}

/** An import of "@filch/filch" on a comment line (` * import { Pool } from "@filch/filch";`). */
const JSR_IMPORT = /^(\s*\*.*\b(?:from|import)\s*\(?\s*)"@filch\/filch"/gm;

function* emitted(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* emitted(path);
    else if (entry.name.endsWith(".js") || entry.name.endsWith(".d.ts")) yield path;
  }
}

let files = 0;
let imports = 0;
for (const path of emitted(join(root, "dist"))) {
  const text = readFileSync(path, "utf8");
  let count = 0;
  const rewritten = text.replace(JSR_IMPORT, (_, head) => {
    count++;
    return `${head}"filch"`;
  });
  if (count > 0) {
    writeFileSync(path, rewritten);
    files++;
    imports += count;
  }
}
console.log(
  `npm build: dist/ emitted; ${imports} example imports of "@filch/filch" rewritten to "filch" in ${files} files`,
);
