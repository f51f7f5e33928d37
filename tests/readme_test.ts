/**
 * The README renders where it is published: npm and JSR show it without the repository around it, so a
 * link or image relative to the repository (`examples/README.md`, `bench/chart.svg`) is broken there.
 * Every link and image must be an absolute https URL or an anchor of one of the README's own headings.
 */
import { readFileSync } from "node:fs";
import { assertEquals, test } from "./_test.ts";

const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");

/** GitHub's (and JSR's) anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
function anchorOf(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, "").replaceAll(" ", "-");
}

/** The README's Markdown links and images outside code: `[text](target)` and `![alt](target)`. */
export function targetsOf(markdown: string): string[] {
  const prose = markdown.replace(/```[\s\S]*?```/g, "").replace(/`[^`\n]*`/g, "");
  return [...prose.matchAll(/!?\[[^\]]*\]\(([^)\s]+)[^)]*\)/g)].map((m) => m[1]);
}

test("every link and image in the README resolves on npm and JSR: an https URL or an anchor of its own", () => {
  const anchors = new Set([...readme.matchAll(/^#+ (.+)$/gm)].map((m) => anchorOf(m[1])));
  const broken = targetsOf(readme).filter((target) =>
    target.startsWith("#") ? !anchors.has(target.slice(1)) : !target.startsWith("https://")
  );
  assertEquals(broken, [], "links or images that would not resolve outside the repository");
});

test("the README link check sees relative links and images, and anchors that do not exist", () => {
  const sample = "[a](spec/README.md) ![b](bench/c.svg) [ok](https://jsr.io) `[code](x.md)` [c](#nowhere)";
  assertEquals(targetsOf(sample), ["spec/README.md", "bench/c.svg", "https://jsr.io", "#nowhere"]);
});
