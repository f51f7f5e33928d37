/**
 * The README and `docs/` render where they are published: npm and JSR show them without the repository
 * around them, so a link or image relative to the repository (`examples/README.md`, `bench/chart.svg`) is
 * broken there. Every link and image of README.md and docs/*.md must be an absolute https URL, an anchor
 * of one of the file's own headings, or a relative link to a file that exists and that both packages ship
 * (package.json "files" and deno.json "publish.include"), with an anchor of that file's headings if it
 * names one. And the README's API section names every export of mod.ts, and the keys of `stats()` and
 * `stats().metrics` that a pool reports.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";
import { Pool } from "../../mod.ts";
import type * as tasks from "../fixtures/tasks.ts";
import { assertEquals, test } from "../_test.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));
const read = (file: string) => readFileSync(join(root, file), "utf8");

/** GitHub's (and JSR's) anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
function anchorOf(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, "").replaceAll(" ", "-");
}

/** The anchors of a Markdown text's headings (outside code). */
function anchorsOf(markdown: string): Set<string> {
  const prose = markdown.replace(/```[\s\S]*?```/g, "");
  return new Set([...prose.matchAll(/^#+ (.+)$/gm)].map((m) => anchorOf(m[1])));
}

/** A Markdown text's links and images outside code: `[text](target)` and `![alt](target)`. */
export function targetsOf(markdown: string): string[] {
  const prose = markdown.replace(/```[\s\S]*?```/g, "").replace(/`[^`\n]*`/g, "");
  return [...prose.matchAll(/!?\[[^\]]*\]\(([^)\s]+)[^)]*\)/g)].map((m) => m[1]);
}

/** Whether a repository path is in a file set given as entries (a file, or a directory with or without `/`). */
function inSet(path: string, entries: readonly string[]): boolean {
  return entries.some((entry) => {
    const e = entry.replace(/^\.\//, "").replace(/\/$/, "");
    return path === e || path.startsWith(`${e}/`);
  });
}

/** The file sets of the two packages: npm's `files` (plus what npm always ships) and JSR's `publish.include`. */
export function packageSets(): { npm: string[]; jsr: string[] } {
  const npmFiles = (JSON.parse(read("package.json")) as { files: string[] }).files;
  const jsrFiles = (JSON.parse(read("deno.json")) as { publish: { include: string[] } }).publish.include;
  return { npm: [...npmFiles, "package.json", "README.md", "LICENSE"], jsr: jsrFiles };
}

/**
 * The links of `file` (a repository path; its text `markdown`) that would not resolve on npm or JSR, each
 * with the reason. `exists` and `readFile` look at the repository (replaced in the self-test).
 */
export function brokenLinks(
  file: string,
  markdown: string,
  sets: { npm: readonly string[]; jsr: readonly string[] },
  exists: (path: string) => boolean = (path) => existsSync(join(root, path)),
  readFile: (path: string) => string = read,
): string[] {
  const own = anchorsOf(markdown);
  const broken: string[] = [];
  for (const target of targetsOf(markdown)) {
    if (target.startsWith("https://")) continue;
    if (target.startsWith("#")) {
      if (!own.has(target.slice(1))) broken.push(`${file}: ${target}: no such heading`);
      continue;
    }
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) {
      broken.push(`${file}: ${target}: only https URLs resolve everywhere`);
      continue;
    }
    const [path, anchor] = target.split("#");
    const resolved = normalize(join(dirname(file), path)).replaceAll("\\", "/");
    if (resolved.startsWith("..") || !exists(resolved)) {
      broken.push(`${file}: ${target}: no such file (${resolved})`);
      continue;
    }
    const missing = [sets.npm, sets.jsr].flatMap((set, i) => inSet(resolved, set) ? [] : [i === 0 ? "npm" : "JSR"]);
    if (missing.length > 0) {
      broken.push(`${file}: ${target}: ${resolved} is not in the ${missing.join(" or ")} package`);
      continue;
    }
    if (anchor !== undefined && !anchorsOf(readFile(resolved)).has(anchor)) {
      broken.push(`${file}: ${target}: ${resolved} has no heading #${anchor}`);
    }
  }
  return broken;
}

/** README.md and docs/*.md, as repository paths. */
function publishedMarkdown(): string[] {
  const docs = readdirSync(join(root, "docs")).filter((name) => name.endsWith(".md")).sort();
  return ["README.md", ...docs.map((name) => `docs/${name}`)];
}

test("every link and image in the README and docs/ resolves on npm and JSR: https, an own anchor, or a shipped file", () => {
  const sets = packageSets();
  const broken = publishedMarkdown().flatMap((file) => brokenLinks(file, read(file), sets));
  assertEquals(broken, [], "links or images that would not resolve where the packages are read");
});

test("both packages ship README.md and every page of docs/", () => {
  const sets = packageSets();
  const unshipped = publishedMarkdown().filter((file) => !inSet(file, sets.npm) || !inSet(file, sets.jsr));
  assertEquals(unshipped, [], "pages missing from package.json 'files' or deno.json 'publish.include'");
});

test("the link check catches broken links: missing files, unshipped files, bad anchors, relative paths out of the set", () => {
  const sample = [
    "[a](spec/README.md) ![b](bench/c.svg) [ok](https://jsr.io) `[code](x.md)` [c](#nowhere) [d](#title)",
    "[e](docs/guide.md) [f](docs/guide.md#usage) [g](docs/guide.md#gone) [h](docs/missing.md) [i](http://x.org)",
    "# Title",
  ].join("\n");
  assertEquals(targetsOf(sample), [
    "spec/README.md",
    "bench/c.svg",
    "https://jsr.io",
    "#nowhere",
    "#title",
    "docs/guide.md",
    "docs/guide.md#usage",
    "docs/guide.md#gone",
    "docs/missing.md",
    "http://x.org",
  ]);
  const files = new Set(["spec/README.md", "bench/c.svg", "docs/guide.md"]);
  const broken = brokenLinks(
    "README.md",
    sample,
    { npm: ["dist", "docs"], jsr: ["mod.ts", "docs/"] },
    (path) => files.has(path),
    () => "# Usage\n",
  );
  assertEquals(broken, [
    "README.md: spec/README.md: spec/README.md is not in the npm or JSR package",
    "README.md: bench/c.svg: bench/c.svg is not in the npm or JSR package",
    "README.md: #nowhere: no such heading",
    "README.md: docs/guide.md#gone: docs/guide.md has no heading #gone",
    "README.md: docs/missing.md: no such file (docs/missing.md)",
    "README.md: http://x.org: only https URLs resolve everywhere",
  ]);
  // From a page in docs/, a link is relative to docs/; one that leaves the repository is broken.
  assertEquals(
    brokenLinks("docs/a.md", "[b](guide.md) [c](../../x.md)", { npm: ["docs"], jsr: ["docs/"] }, (p) => files.has(p)),
    ["docs/a.md: ../../x.md: no such file (../x.md)"],
  );
});

test("the README's API section names every export of mod.ts", () => {
  const mod = read("mod.ts");
  const exported = [...mod.matchAll(/export\s*(?:type\s*)?\{([^}]*)\}/g)].flatMap((m) =>
    m[1].split(",").map((name) => name.trim().replace(/^type\s+/, "")).filter((name) => name !== "")
  );
  const readme = read("README.md");
  const api = readme.slice(readme.indexOf("## API"), readme.indexOf("\n## ", readme.indexOf("## API") + 1));
  const missing = exported.filter((name) => !new RegExp(`\\b${name}\\b`).test(api));
  assertEquals(missing, [], "exports of mod.ts the README's API section does not name");
  if (exported.length < 40) throw new Error(`only ${exported.length} exports parsed from mod.ts: the parse is broken`);
});

/** The names in a code span of the README that follows `after` (`{ a, b: { c }, d? }` gives a, b, c, d). */
function namesAfter(readme: string, after: string): string[] {
  const at = readme.indexOf(after);
  if (at === -1) throw new Error(`the README has no '${after}'`);
  const span = readme.slice(at + after.length).match(/`([^`]*)`/);
  if (span === null) throw new Error(`the README has no code span after '${after}'`);
  return [...new Set([...span[1].matchAll(/[A-Za-z_]\w*/g)].map((m) => m[0]))].sort();
}

test("the README names exactly the keys of stats(), a worker's stats, stats().metrics and a histogram", async () => {
  const readme = read("README.md");
  const pool = await Pool.create<typeof tasks>(new URL("../fixtures/tasks.ts", import.meta.url), {
    workers: 1,
    metrics: true,
  });
  try {
    await pool.run("add", 1, 2);
    const stats = pool.stats();
    const metrics = stats.metrics!;
    const keys = (...objects: object[]) => [...new Set(objects.flatMap((o) => Object.keys(o)))].sort();
    assertEquals(namesAfter(readme, "**`stats()`** returns "), keys(stats, stats.payloadArena), "stats()");
    assertEquals(namesAfter(readme, "each of `workers[i]` is\n"), keys(stats.workers[0]), "stats().workers[i]");
    assertEquals(namesAfter(readme, "**`stats().metrics`** is "), keys(metrics, metrics.workers[0]), "metrics");
    assertEquals(namesAfter(readme, "where `runTime` and `waitTime` are "), keys(metrics.runTime), "a histogram");
  } finally {
    await pool.terminate();
  }
}, 60_000);
