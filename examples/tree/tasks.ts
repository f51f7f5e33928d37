/**
 * A parallel traversal that sums an unbalanced binary tree: the task module of `examples/tree/main.ts`.
 *
 * The tree lives in one SharedArrayBuffer as four Int32Arrays indexed by node: `left` and `right` child
 * (-1 for none), `size` (nodes in the subtree) and `value`. `buildTree` makes it deterministically from a
 * seed with a skewed shape: at each node, the left subtree gets a share of the remaining nodes drawn far
 * from one half (between 2% and 20%, or between 80% and 98%), so the two sides of most nodes differ by a
 * factor of 4 to 50 and no static split of the work is balanced.
 *
 * `sumParallel` forks the right subtree with `join` while it walks the left one itself, down to subtrees
 * of `cutoff` nodes, which `sumSequential` walks; idle workers steal the oldest (largest) forks. Each visit
 * does `work` rounds of an integer hash of the node's value, standing in for real per-node work (the bare
 * sum is memory-bound and done in a few milliseconds).
 *
 * @module
 */
import { join } from "../../mod.ts";

/** The tree's arrays, all on one SharedArrayBuffer. */
export interface Tree {
  left: Int32Array;
  right: Int32Array;
  size: Int32Array;
  value: Int32Array;
}

/**
 * Builds a skewed tree of `n` nodes (root 0, nodes numbered in preorder) from `seed`.
 *
 * @param n Nodes, at least 1.
 * @param seed Any non-zero int32; the same seed gives the same tree.
 * @returns The tree, on a SharedArrayBuffer.
 */
export function buildTree(n: number, seed: number): Tree {
  const buffer = new SharedArrayBuffer(n * 16);
  const tree: Tree = {
    left: new Int32Array(buffer, 0, n),
    right: new Int32Array(buffer, n * 4, n),
    size: new Int32Array(buffer, n * 8, n),
    value: new Int32Array(buffer, n * 12, n),
  };
  let s = seed | 0 || 1;
  const random = () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32;
  };
  // An explicit stack of (node, subtree size): the tree is deep on its heavy side.
  const stack: number[] = [0, n];
  while (stack.length > 0) {
    const count = stack.pop()!;
    const node = stack.pop()!;
    tree.size[node] = count;
    tree.value[node] = (random() * 1000) | 0;
    const rest = count - 1;
    const u = random();
    const share = u < 0.5 ? 0.02 + u * 0.36 : 0.8 + (u - 0.5) * 0.36;
    const leftCount = Math.min(rest, Math.round(rest * share));
    const rightCount = rest - leftCount;
    tree.left[node] = leftCount > 0 ? node + 1 : -1;
    tree.right[node] = rightCount > 0 ? node + 1 + leftCount : -1;
    if (rightCount > 0) stack.push(node + 1 + leftCount, rightCount);
    if (leftCount > 0) stack.push(node + 1, leftCount);
  }
  return tree;
}

/** The height of the tree (a root alone has height 1). */
export function height(tree: Tree, node = 0): number {
  let best = 0;
  const stack: number[] = [node, 1];
  while (stack.length > 0) {
    const depth = stack.pop()!;
    const at = stack.pop()!;
    if (depth > best) best = depth;
    if (tree.left[at] >= 0) stack.push(tree.left[at], depth + 1);
    if (tree.right[at] >= 0) stack.push(tree.right[at], depth + 1);
  }
  return best;
}

/** One node's contribution: `work` rounds of an integer hash of its value, reduced to 0..1023. */
function visit(value: number, work: number): number {
  let h = value | 0;
  for (let i = 0; i < work; i++) h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d) + i | 0;
  return (h >>> 0) & 1023;
}

/**
 * The sum over the subtree at `node`, in parallel: forks the right subtree, walks the left one.
 *
 * @param tree The tree.
 * @param node The subtree's root.
 * @param work Hash rounds per node.
 * @param cutoff At or below this subtree size, the sequential walk runs.
 * @returns The sum of every node's contribution.
 */
export function sumParallel(tree: Tree, node: number, work: number, cutoff: number): number {
  if (tree.size[node] <= cutoff) return sumSequential(tree, node, work);
  const l = tree.left[node];
  const r = tree.right[node];
  const own = visit(tree.value[node], work);
  if (l < 0) return own + sumParallel(tree, r, work, cutoff);
  if (r < 0) return own + sumParallel(tree, l, work, cutoff);
  const [a, b] = join(() => sumParallel(tree, l, work, cutoff), sumParallel, tree, r, work, cutoff);
  return own + a + b;
}

/**
 * The sequential program: the recursive sum over the subtree at `node`.
 *
 * @param tree The tree.
 * @param node The subtree's root.
 * @param work Hash rounds per node.
 * @returns The sum of every node's contribution.
 */
export function sumSequential(tree: Tree, node: number, work: number): number {
  let sum = visit(tree.value[node], work);
  const l = tree.left[node];
  const r = tree.right[node];
  if (l >= 0) sum += sumSequential(tree, l, work);
  if (r >= 0) sum += sumSequential(tree, r, work);
  return sum;
}
