/**
 * filch in a real browser (step 4c of `npm test`), from the packed tarball: the unbundled npm build (the
 * tarball's files as they are, `dist/mod.js` imported by path), a project bundled with esbuild and one built
 * with Vite (each installing the tarball and its bundler from npm and following docs/bundlers.md's recipe), each
 * served over loopback with the cross-origin isolation headers (COOP `same-origin`, COEP `require-corp`) and
 * running 10k tasks and a fork-join fib that must steal, and a producer in a module Web Worker (the page's
 * `producer.js`: the pool's handle posted to it, 2,000 tasks and a runMany from there, its summary checked),
 * in headless Chromium (Debian's `chromium`, which `.ci/run` installs when it is missing). The same page
 * served without the headers must fail with the pool's own error naming them (the control: the check can
 * fail, and the failure is named, not silent).
 *
 * Chromium is driven through its DevTools protocol over a WebSocket (Node's own client): no driver package.
 * Exit 0: both pages as expected; 1: anything else; 2: no Chromium here (SKIPPED, with the reason, never a
 * pass; `npm test` counts a skip under CI as a failure: CI must not skip it).
 *
 * @module
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { extname, join, normalize } from "node:path";
import process from "node:process";
import {
  CONSUMER_RESULT,
  CONSUMER_RUN_WITH_WEB_PRODUCER,
  consumerJsTasks,
  consumerWebProducer,
  packTarball,
  PRODUCER_SUMMARY,
  runCommand,
} from "./_consumer.ts";

const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium";
const DEADLINE_MS = 90_000;

const tasks = consumerJsTasks;
const producer = consumerWebProducer;

const main = (specifier: string) =>
  `import { move, Pool } from "${specifier}";
try {
  const pool = await Pool.create(new URL("./tasks.js", import.meta.url), { workers: 2, metrics: true });
${CONSUMER_RUN_WITH_WEB_PRODUCER}  await pool.close();
  globalThis.__result = { ...${CONSUMER_RESULT}, producer: fromProducer };
} catch (error) {
  globalThis.__result = { error: (error && error.name) + ": " + (error && error.message) };
}
`;

const PAGE = '<!doctype html><script type="module" src="./main.js"></script>\n';

/** The esbuild the consumer installs, and docs/bundlers.md's recipe: the task module, filch's worker entry and
 * the producer's Web Worker are entry points of their own (esbuild does not follow a worker's URL), flat in
 * one output directory. */
const ESBUILD = "0.28.2";
const ESBUILD_RECIPE = [
  "main.js",
  "tasks.js",
  "producer.js",
  "node_modules/filch/dist/lib/worker_thread.js",
  "--bundle",
  "--format=esm",
  "--platform=browser",
  "--outdir=out",
  "--entry-names=[name]",
] as const;

/**
 * The Vite the consumer installs, and docs/bundlers.md's recipe: filch's worker entry through Vite's worker
 * import (`?worker&url`) passed as `workerUrl`; the task module a build entry of its own whose exports are
 * kept, at a name the page can point at.
 */
const VITE = "8.3.8";
const VITE_CONFIG = `export default {
  worker: { format: "es" },
  build: {
    target: "es2022",
    rollupOptions: {
      input: { index: "index.html", tasks: "tasks.js" },
      preserveEntrySignatures: "strict",
      output: { entryFileNames: "assets/[name].js" },
    },
  },
};
`;
const VITE_MAIN = main("filch")
  .replace(
    'import { move, Pool } from "filch";',
    'import { move, Pool } from "filch";\nimport workerUrl from "filch/worker?worker&url";',
  )
  .replace(
    'Pool.create(new URL("./tasks.js", import.meta.url), { workers: 2, metrics: true })',
    'Pool.create(new URL(/* @vite-ignore */ "./tasks.js", import.meta.url), { workers: 2, metrics: true, workerUrl: new URL(workerUrl, location.href) })',
  );

if (!VITE_MAIN.includes("filch/worker?worker&url") || !VITE_MAIN.includes("workerUrl: new URL(workerUrl")) {
  throw new Error("Cannot build the Vite page as its main.js no longer matches the recipe's replacements");
}

const TYPES: Record<string, string> = { ".html": "text/html", ".js": "text/javascript", ".json": "application/json" };

function serve(dir: string, isolated: boolean): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname));
    const file = join(dir, path === "/" ? "index.html" : path);
    if (!file.startsWith(dir) || !existsSync(file)) {
      res.writeHead(404).end();
      return;
    }
    const headers: Record<string, string> = { "content-type": TYPES[extname(file)] ?? "application/octet-stream" };
    if (isolated) {
      headers["cross-origin-opener-policy"] = "same-origin";
      headers["cross-origin-embedder-policy"] = "require-corp";
    }
    res.writeHead(200, headers).end(readFileSync(file));
  });
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      const address = server.address() as { port: number };
      resolve({ server, url: `http://127.0.0.1:${address.port}/` });
    });
  });
}

/** Opens `url` in headless Chromium and waits for the page's `__result`. */
async function runPage(url: string, profile: string): Promise<Record<string, unknown>> {
  const chromium = spawn(CHROMIUM, [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    `--user-data-dir=${profile}`,
    "--remote-debugging-port=0",
    url,
  ]);
  let stderr = "";
  try {
    const port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`Chromium did not start within 30 s:\n${stderr}`)), 30_000);
      chromium.stderr.on("data", (chunk) => {
        stderr += chunk;
        const m = /DevTools listening on ws:\/\/127\.0\.0\.1:(\d+)\//.exec(stderr);
        if (m) {
          clearTimeout(timer);
          resolve(Number(m[1]));
        }
      });
      chromium.on("exit", (code) => reject(new Error(`Chromium exited (${code}) before it listened:\n${stderr}`)));
    });
    const targets = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json() as {
      type: string;
      url: string;
      webSocketDebuggerUrl: string;
    }[];
    const page = targets.find((t) => t.type === "page" && t.url.startsWith(url));
    if (page === undefined) throw new Error(`no page target for ${url}: ${JSON.stringify(targets)}`);
    const socket = new WebSocket(page.webSocketDebuggerUrl);
    await new Promise((resolve, reject) => {
      socket.onopen = resolve;
      socket.onerror = () => reject(new Error("could not connect to the page's DevTools socket"));
    });
    let id = 0;
    const pending = new Map<number, (value: unknown) => void>();
    socket.onmessage = (event) => {
      const message = JSON.parse(String(event.data)) as { id?: number; result?: unknown };
      if (message.id !== undefined) pending.get(message.id)?.(message.result);
    };
    const evaluate = (expression: string) =>
      new Promise<unknown>((resolve) => {
        pending.set(++id, resolve);
        socket.send(JSON.stringify({ id, method: "Runtime.evaluate", params: { expression, returnByValue: true } }));
      });
    const until = Date.now() + DEADLINE_MS;
    while (Date.now() < until) {
      const result = await evaluate("JSON.stringify(globalThis.__result ?? null)") as { result?: { value?: string } };
      const value = result?.result?.value;
      if (typeof value === "string" && value !== "null") {
        socket.close();
        return JSON.parse(value);
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    socket.close();
    throw new Error(`the page set no result within ${DEADLINE_MS} ms`);
  } finally {
    chromium.kill("SIGKILL");
  }
}

let code = 1;
const dir = mkdtempSync(join(tmpdir(), "filch-browser-"));
try {
  const version = existsSync(CHROMIUM) ? await runCommand(CHROMIUM, ["--version"], dir) : null;
  if (version === null || version.code !== 0) {
    console.log(`SKIPPED: no Chromium at ${CHROMIUM} (install Debian's chromium, or set CHROMIUM)`);
    code = 2;
  } else {
    console.log(version.output.trim());
    const tarball = await packTarball(dir);
    let passed = 0;
    let failed = 0;
    const expect = async (what: string, site: string, isolated: boolean, profile: string) => {
      const served = await serve(site, isolated);
      try {
        const result = await runPage(served.url, join(dir, profile));
        const error = String(result.error ?? "");
        const ok = isolated
          ? result.ok === true && result.fib === 832040 && result.waited !== "timed-out" &&
            (result.steals as number) > 0 && result.features === "" &&
            JSON.stringify(result.producer) === JSON.stringify(PRODUCER_SUMMARY)
          : error.includes("Cross-Origin-Opener-Policy") && error.includes("Cross-Origin-Embedder-Policy");
        console.log(
          ok
            ? `ok: ${what}: ${
              isolated
                ? `10k tasks, fib(30), ${
                  String(result.steals)
                } steals (a waiting join's b stolen); abort, map, runMany, broadcast, metrics; a Web Worker producer's ${
                  JSON.stringify(result.producer)
                }`
                : error.slice(0, 110) + "…"
            }`
            : `FAILED: ${what}: ${JSON.stringify(result)}`,
        );
        if (ok) passed++;
        else failed++;
      } finally {
        served.server.close();
      }
    };

    // The unbundled npm build: the tarball's files as they are, imported by path.
    const site = join(dir, "site");
    mkdirSync(join(site, "filch"), { recursive: true });
    const untar = await runCommand("tar", ["xzf", tarball, "-C", join(site, "filch"), "--strip-components=1"], dir);
    if (untar.code !== 0) throw new Error(`tar failed: ${untar.output}`);
    writeFileSync(join(site, "tasks.js"), tasks("./filch/dist/mod.js"));
    writeFileSync(join(site, "main.js"), main("./filch/dist/mod.js"));
    writeFileSync(join(site, "producer.js"), producer("./filch/dist/mod.js"));
    writeFileSync(join(site, "index.html"), PAGE);
    await expect("unbundled npm build, cross-origin isolated", site, true, "profile-1");
    await expect("unbundled npm build, without the headers: the pool's error names them", site, false, "profile-2");

    // esbuild: a project that installed the tarball and esbuild, bundled as docs/bundlers.md's recipe says.
    const project = join(dir, "esbuild");
    mkdirSync(project);
    writeFileSync(join(project, "package.json"), '{ "name": "consumer", "private": true, "type": "module" }\n');
    const installed = await runCommand(
      "npm",
      ["install", "--no-audit", "--no-fund", tarball, `esbuild@${ESBUILD}`],
      project,
    );
    if (installed.code !== 0) {
      throw new Error(`npm install of the tarball and esbuild failed:\n${installed.output.slice(-2000)}`);
    }
    writeFileSync(join(project, "tasks.js"), tasks("filch"));
    writeFileSync(join(project, "main.js"), main("filch"));
    writeFileSync(join(project, "producer.js"), producer("filch"));
    const built = await runCommand(join(project, "node_modules", ".bin", "esbuild"), [...ESBUILD_RECIPE], project);
    if (built.code !== 0) throw new Error(`the esbuild recipe failed:\n${built.output.slice(-2000)}`);
    writeFileSync(join(project, "out", "index.html"), PAGE);
    await expect(
      "esbuild bundle (docs/bundlers.md recipe), cross-origin isolated",
      join(project, "out"),
      true,
      "profile-3",
    );

    // Vite: a project that installed the tarball and Vite, built as docs/bundlers.md's recipe says.
    const vite = join(dir, "vite");
    mkdirSync(vite);
    writeFileSync(join(vite, "package.json"), '{ "name": "consumer", "private": true, "type": "module" }\n');
    const withVite = await runCommand("npm", ["install", "--no-audit", "--no-fund", tarball, `vite@${VITE}`], vite);
    if (withVite.code !== 0) {
      throw new Error(`npm install of the tarball and Vite failed:\n${withVite.output.slice(-2000)}`);
    }
    writeFileSync(join(vite, "tasks.js"), tasks("filch"));
    writeFileSync(join(vite, "main.js"), VITE_MAIN);
    // Vite bundles it as a worker of its own from the page's `new Worker(new URL("./producer.js", …))`.
    writeFileSync(join(vite, "producer.js"), producer("filch"));
    writeFileSync(join(vite, "vite.config.js"), VITE_CONFIG);
    writeFileSync(join(vite, "index.html"), PAGE);
    const viteBuilt = await runCommand(join(vite, "node_modules", ".bin", "vite"), ["build"], vite);
    if (viteBuilt.code !== 0) throw new Error(`vite build failed:\n${viteBuilt.output.slice(-2000)}`);
    await expect("Vite build (docs/bundlers.md recipe), cross-origin isolated", join(vite, "dist"), true, "profile-4");

    console.log(`browser (headless Chromium): ${passed} passed, ${failed} failed`);
    code = failed === 0 ? 0 : 1;
  }
} catch (error) {
  console.log(`FAILED: ${(error as Error).message}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
process.exit(code);
