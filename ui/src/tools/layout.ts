// Where new nodes go: free space next to a related node (never on top of another node), and a
// left-to-right layout for workflows built from scratch.
import type { ComfyApp, LGraph, LGraphNode, LiteGraphGlobal } from "../host/comfy";

/** x, y, width, height in graph space, title bar included. */
export type Box = [number, number, number, number];
export type Point = [number, number];

/** Space kept between nodes. */
export const GAP = 40;
const STEP = 20;

export function titleHeight(lg: LiteGraphGlobal): number {
  const height = (lg as { NODE_TITLE_HEIGHT?: number }).NODE_TITLE_HEIGHT;
  return typeof height === "number" && height > 0 ? height : 30;
}

/** A node's box: `pos` is the top-left of its body; the title bar sits above it. */
export function nodeBox(node: LGraphNode, title: number): Box {
  const [x, y] = [node.pos[0], node.pos[1]];
  if (node.flags?.collapsed) {
    const width = (node as { _collapsed_width?: number })._collapsed_width || 100;
    return [x, y - title, width, title];
  }
  return [x, y - title, node.size[0], node.size[1] + title];
}

export function overlaps(a: Box, b: Box, margin = 0): boolean {
  return a[0] < b[0] + b[2] + margin && a[0] + a[2] + margin > b[0] && a[1] < b[1] + b[3] + margin && a[1] + a[3] + margin > b[1];
}

/**
 * The free position closest to `start` (the body's top-left) for a node of `size`, searching
 * to the right of and above/below `start` on a 20-unit grid; if the whole area is taken,
 * just right of everything. Keeps `margin` around other boxes.
 */
export function findFreeSpot(boxes: Box[], size: Point, start: Point, title: number, margin = GAP / 2): Point {
  const box = (x: number, y: number): Box => [x, y - title, size[0], size[1] + title];
  const free = (x: number, y: number) => !boxes.some((b) => overlaps(box(x, y), b, margin));
  const candidates: { x: number; y: number; cost: number }[] = [];
  for (let i = 0; i <= 60; i++) {
    for (let j = -40; j <= 60; j++) {
      candidates.push({ x: start[0] + i * STEP, y: start[1] + j * STEP, cost: i + (j < 0 ? -1.5 * j : j) });
    }
  }
  candidates.sort((a, b) => a.cost - b.cost);
  const spot = candidates.find((c) => free(c.x, c.y));
  if (spot) return [spot.x, spot.y];
  const right = Math.max(...boxes.map((b) => b[0] + b[2]));
  return [right + GAP, start[1]];
}

/** The visible canvas centre, where ComfyUI puts a node added with no other hint. */
function canvasCentre(app: ComfyApp): Point | null {
  const canvas = app.canvas as { visible_area?: ArrayLike<number>; ds?: { visible_area?: ArrayLike<number> } } | undefined;
  const area = canvas?.visible_area ?? canvas?.ds?.visible_area;
  if (!area || !(Number(area[2]) > 0) || !(Number(area[3]) > 0)) return null;
  return [Number(area[0]) + Number(area[2]) / 2, Number(area[1]) + Number(area[3]) / 2];
}

/**
 * A position in `graph` for a new node of `size`: right of `near` (or of the most recently
 * added node), else centred in the visible canvas, moved to the nearest free space.
 */
export function placeNewNode(app: ComfyApp, graph: LGraph, lg: LiteGraphGlobal, size: Point, near?: LGraphNode): Point {
  const title = titleHeight(lg);
  const nodes = [...(graph.nodes ?? [])];
  const boxes = nodes.map((n) => nodeBox(n, title));
  const anchor = near ?? nodes[nodes.length - 1];
  let start: Point;
  if (anchor) {
    const box = nodeBox(anchor, title);
    start = [box[0] + box[2] + GAP, anchor.pos[1]];
  } else {
    const centre = canvasCentre(app) ?? [size[0] / 2 + 100, size[1] / 2 + 100];
    start = [centre[0] - size[0] / 2, centre[1] - size[1] / 2];
  }
  const [x, y] = findFreeSpot(boxes, size, [Math.round(start[0]), Math.round(start[1])], title);
  return [x, y];
}

/** The nodes of `graph` whose boxes a node of `size` at `pos` would overlap. */
export function overlapping(graph: LGraph, lg: LiteGraphGlobal, pos: Point, size: Point): LGraphNode[] {
  const title = titleHeight(lg);
  const box: Box = [pos[0], pos[1] - title, size[0], size[1] + title];
  return (graph.nodes ?? []).filter((n) => overlaps(box, nodeBox(n, title)));
}

/**
 * Left-to-right columns by depth (a node sits one column right of its deepest source; a node
 * without sources sits just left of its first consumer), each column stacked top to bottom. Returns the body top-left of every item.
 */
export function layoutColumns<K>(
  items: { key: K; size: Point; sources: K[] }[],
  title: number,
  origin: Point = [50, 50],
): Map<K, Point> {
  const byKey = new Map(items.map((item) => [item.key, item]));
  const depth = new Map<K, number>();
  const depthOf = (key: K, seen: Set<K>): number => {
    const known = depth.get(key);
    if (known !== undefined) return known;
    if (seen.has(key)) return 0; // a cycle: stop here
    seen.add(key);
    const sources = byKey.get(key)?.sources.filter((s) => byKey.has(s)) ?? [];
    const d = sources.length ? 1 + Math.max(...sources.map((s) => depthOf(s, seen))) : 0;
    depth.set(key, d);
    return d;
  };
  for (const item of items) depthOf(item.key, new Set());
  // A node without sources (a loader, an empty latent) sits just left of its first consumer.
  for (const item of items) {
    if (item.sources.some((s) => byKey.has(s))) continue;
    const consumers = items.filter((other) => other.sources.includes(item.key)).map((other) => depth.get(other.key)!);
    if (consumers.length) depth.set(item.key, Math.max(0, Math.min(...consumers) - 1));
  }
  const columns: (typeof items)[] = [];
  for (const item of items) (columns[depth.get(item.key)!] ??= []).push(item);
  const positions = new Map<K, Point>();
  let x = origin[0];
  for (const column of columns) {
    if (!column) continue;
    let y = origin[1] + title;
    for (const item of column) {
      positions.set(item.key, [x, y]);
      y += item.size[1] + title + GAP;
    }
    x += Math.max(...column.map((item) => item.size[0])) + GAP * 2;
  }
  return positions;
}
