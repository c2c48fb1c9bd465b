// What a CPU profile (CDP Profiler, as the long-thread bench records it with --profile) spent its
// long stretches on: the runs of samples with no idle between them longer than `over` ms, each
// with the functions that took the most of it by self time and by total time (the function and
// everything it called). Also runnable on a saved profile:
//   node e2e/cpuprofile.mjs file.cpuprofile [over-ms]
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

function index(profile) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  return { byId, parent };
}

const label = (n) => {
  const f = n.callFrame;
  const file = f.url ? f.url.split("/").at(-1) : "";
  return `${f.functionName || "(anonymous)"} ${file}:${f.lineNumber + 1}:${f.columnNumber + 1}`;
};

/** Busy stretches: runs of samples with no idle sample between them, each [{ms, samples: [[nodeId, ms]]}]. */
function stretches(profile, byId) {
  const out = [];
  let cur = null;
  profile.samples.forEach((id, i) => {
    if (byId.get(id).callFrame.functionName === "(idle)") {
      if (cur) out.push(cur);
      cur = null;
      return;
    }
    const ms = (profile.timeDeltas[i + 1] ?? 0) / 1000;
    cur ??= { ms: 0, samples: [] };
    cur.ms += ms;
    cur.samples.push([id, ms]);
  });
  if (cur) out.push(cur);
  return out;
}

const add = (map, key, ms) => map.set(key, (map.get(key) ?? 0) + ms);
const top = (map, n) => [...map.entries()].sort((a, b) => b[1] - a[1]).slice(0, n);

/** Self and total time per function over `samples`. */
function costs(samples, byId, parent) {
  const self = new Map();
  const total = new Map();
  for (const [id, ms] of samples) {
    add(self, label(byId.get(id)), ms);
    const seen = new Set();
    for (let at = id; at !== undefined; at = parent.get(at)) {
      const l = label(byId.get(at));
      if (!seen.has(l)) add(total, l, ms);
      seen.add(l);
    }
  }
  return { self, total };
}

function section(lines, title, { self, total }, n) {
  lines.push(`-- ${title}; self:`);
  for (const [l, ms] of top(self, n)) lines.push(`   ${ms.toFixed(1).padStart(7)}  ${l}`);
  lines.push("   total:");
  for (const [l, ms] of top(total, n)) lines.push(`   ${ms.toFixed(1).padStart(7)}  ${l}`);
}

/** A text summary of the busy stretches over `over` ms: the longest `limit` one by one, then all
 * of them together; `n` functions each. */
export function summarize(profile, { over = 50, limit = 3, n = 12 } = {}) {
  const { byId, parent } = index(profile);
  const long = stretches(profile, byId).filter((s) => s.ms > over);
  const lines = [`${long.length} busy stretches over ${over} ms: ${long.map((s) => s.ms.toFixed(0)).join(", ")}`];
  for (const s of [...long].sort((a, b) => b.ms - a.ms).slice(0, limit)) section(lines, `${s.ms.toFixed(0)} ms stretch`, costs(s.samples, byId, parent), n);
  section(lines, `all ${long.length} stretches`, costs(long.flatMap((s) => s.samples), byId, parent), n);
  return lines.join("\n");
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const profile = JSON.parse(readFileSync(process.argv[2], "utf8"));
  console.log(summarize(profile, { over: Number(process.argv[3] ?? 50) }));
}
