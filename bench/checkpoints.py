"""How large checkpoints get: a 200-node workflow over a 100-turn thread, each turn saving the
graph as it was before the turn's edits (core/store/checkpoints.py, into a real SQLite file).

    PYTHONPATH=... .venv/bin/python bench/checkpoints.py [--nodes 200] [--turns 100] [--quick]

The workflow is built from real node definitions (data/object_info.json.gz) the way ComfyUI
1.58 serializes a graph: every node with its widget inputs listed, sizes, order, properties,
widget values (prompts of ~150 characters), links between matching slots, and 20 of its nodes
inside a subgraph definition. Each turn makes 1-4 edits like the assistant's and the user's:
widget values set (60%), a node added and linked (15%), a node removed (10%), a node moved by
hand (30%); in 5% of the turns the user undid the last turn (its graph comes back: stored
once). Prints the graph's size raw and compressed (zlib levels 6 and 9), what the thread's
checkpoints take once all turns saved one (within the bounds: MAX_CHECKPOINTS, MAX_THREAD_BYTES),
what the database file grew by, and the time to save and to read one.

TARGET (guards): the thread's checkpoints after 100 turns of a 200-node workflow take at most
4 MB (measured 2.2 MB: 100 checkpoints of ~21 KB; the bound per thread is 16 MB), saving one
takes under 50 ms at p95 (17 ms measured).
`--quick`: 40 nodes, 12 turns (CI).
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import gzip
import json
import random
import statistics
import tempfile
import time
import zlib
from pathlib import Path
from typing import Any

from comfyui_assistant.core.base.json_text import compact_json
from comfyui_assistant.core.knowledge.environment import DEFAULT_OBJECT_INFO
from comfyui_assistant.core.store.checkpoints import MAX_CHECKPOINTS, MAX_THREAD_BYTES, Checkpoints
from comfyui_assistant.core.store.store import DB_NAME, Store

PROMPT = (
    "a lighthouse on a cliff at dusk, volumetric light, dramatic clouds, 35mm film, high detail, "
    "soft rim light, muted palette, wide angle, fog rolling over the sea, crashing waves"
)
WORDS = PROMPT.split(" ")


def definitions() -> dict[str, Any]:
    raw = Path(DEFAULT_OBJECT_INFO).read_bytes()
    data: dict[str, Any] = json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)
    return data


def _widget_value(rng: random.Random, spec: Any) -> Any:
    kind, options = spec[0], (spec[1] if len(spec) > 1 and isinstance(spec[1], dict) else {})
    if isinstance(kind, list):
        return kind[0] if kind else ""
    if kind == "INT":
        return int(options.get("default", rng.randint(0, 2**32)))
    if kind == "FLOAT":
        return float(options.get("default", 1.0))
    if kind == "BOOLEAN":
        return bool(options.get("default", False))
    if kind == "STRING":
        return " ".join(rng.choices(WORDS, k=22)) if options.get("multiline") else "ComfyUI"
    return None


def _is_widget(spec: Any) -> bool:
    kind = spec[0] if isinstance(spec, list) and spec else None
    return isinstance(kind, list) or kind in ("INT", "FLOAT", "BOOLEAN", "STRING")


class Workflow:
    """A graph in ComfyUI's serialized form, edited as a chat edits it."""

    def __init__(self, defs: dict[str, Any], rng: random.Random, nodes: int) -> None:
        self.defs, self.rng = defs, rng
        self.types = sorted(t for t, d in defs.items() if d.get("output") or d.get("input"))
        self.nodes: list[dict[str, Any]] = []
        self.links: list[list[Any]] = []
        self.last_node = self.last_link = 0
        for _ in range(nodes - 20):
            self.add()
        inner = Workflow.__new__(Workflow)
        inner.defs, inner.rng, inner.types = defs, rng, self.types
        inner.nodes, inner.links, inner.last_node, inner.last_link = [], [], 0, 0
        for _ in range(20):
            inner.add()
        self.subgraph = {
            "id": "5a2c0e1f-8b7d-4c3e-9f10-2b3c4d5e6f70",
            "version": 1,
            "name": "Upscale and refine",
            "state": {"lastNodeId": inner.last_node, "lastLinkId": inner.last_link},
            "inputNode": {"id": -10, "bounding": [0, 0, 120, 60]},
            "outputNode": {"id": -20, "bounding": [900, 0, 120, 60]},
            "inputs": [],
            "outputs": [],
            "widgets": [],
            "nodes": inner.nodes,
            "links": [dict(zip(("id", "origin_id", "origin_slot", "target_id", "target_slot",
                                "type"), link, strict=True)) for link in inner.links],
        }  # fmt: skip
        self.last_node += 1
        self.nodes.append(
            {"id": self.last_node, "type": self.subgraph["id"], "pos": [0, -400],
             "size": [300, 120], "flags": {}, "order": len(self.nodes), "mode": 0, "inputs": [],
             "outputs": [], "properties": {}, "widgets_values": []}
        )  # fmt: skip

    def add(self) -> None:
        kind = self.rng.choice(self.types)
        spec = self.defs[kind]
        self.last_node += 1
        node_id = self.last_node
        inputs, values = [], []
        for group in ("required", "optional"):
            for name, item in (spec.get("input", {}).get(group) or {}).items():
                slot: dict[str, Any] = {"localized_name": name, "name": name}
                if _is_widget(item):
                    slot.update(type=item[0] if isinstance(item[0], str) else "COMBO",
                                widget={"name": name}, link=None)  # fmt: skip
                    values.append(_widget_value(self.rng, item))
                else:
                    slot.update(type=str(item[0]), link=self._link_into(node_id, len(inputs), item))
                inputs.append(slot)
        outputs = [
            {"localized_name": name, "name": name, "type": kind_, "links": []}
            for kind_, name in zip(spec.get("output") or [], spec.get("output_name") or [],
                                   strict=False)
        ]  # fmt: skip
        n = len(self.nodes)
        self.nodes.append(
            {"id": node_id, "type": kind, "pos": [(n % 10) * 360, (n // 10) * 300],
             "size": [315, 46 + 24 * len(inputs)], "flags": {}, "order": n, "mode": 0,
             "inputs": inputs, "outputs": outputs,
             "properties": {"cnr_id": "comfy-core", "ver": "0.3.64", "Node name for S&R": kind},
             "widgets_values": values}
        )  # fmt: skip

    def _link_into(self, target: int, slot: int, item: Any) -> int | None:
        kind = str(item[0])
        for node in reversed(self.nodes[-40:]):
            for index, out in enumerate(node["outputs"]):
                if out["type"] == kind:
                    self.last_link += 1
                    out["links"].append(self.last_link)
                    self.links.append([self.last_link, node["id"], index, target, slot, kind])
                    return self.last_link
        return None

    def set_widgets(self) -> None:
        node = self.rng.choice([n for n in self.nodes if n["widgets_values"]])
        k = self.rng.randrange(len(node["widgets_values"]))
        value = node["widgets_values"][k]
        if isinstance(value, bool):
            node["widgets_values"][k] = not value
        elif isinstance(value, (int, float)):
            node["widgets_values"][k] = value + self.rng.randint(1, 9)
        elif isinstance(value, str):
            node["widgets_values"][k] = " ".join(self.rng.choices(WORDS, k=22))

    def remove(self) -> None:
        node = self.rng.choice(self.nodes[:-1])  # (not the subgraph node)
        self.nodes.remove(node)
        gone = {link[0] for link in self.links if node["id"] in (link[1], link[3])}
        self.links = [link for link in self.links if link[0] not in gone]
        for other in self.nodes:
            for slot in other["inputs"]:
                if slot.get("link") in gone:
                    slot["link"] = None
            for out in other["outputs"]:
                out["links"] = [i for i in out["links"] if i not in gone]

    def move(self) -> None:
        node = self.rng.choice(self.nodes)
        node["pos"] = [node["pos"][0] + self.rng.randint(-80, 80), node["pos"][1] + 40]

    def edit(self) -> None:
        roll = self.rng.random()
        if roll < 0.6:
            self.set_widgets()
        elif roll < 0.75:
            self.add()
        elif roll < 0.85:
            self.remove()
        if self.rng.random() < 0.3:
            self.move()

    def serialize(self) -> dict[str, Any]:
        return copy.deepcopy(
            {
                "id": "0b5c3d4e-1f20-4a3b-8c4d-5e6f7a8b9c0d",
                "revision": 0,
                "last_node_id": self.last_node,
                "last_link_id": self.last_link,
                "nodes": self.nodes,
                "links": self.links,
                "groups": [],
                "definitions": {"subgraphs": [self.subgraph]},
                "config": {},
                "extra": {"ds": {"scale": 0.8, "offset": [120, 40]}, "frontendVersion": "1.58.1"},
                "version": 0.4,
            }
        )


def graphs(nodes: int, turns: int, seed: int = 7) -> list[dict[str, Any]]:
    """The graph before each turn's edits (a 5% chance the user undid the turn before)."""
    rng = random.Random(seed)
    workflow = Workflow(definitions(), rng, nodes)
    states = []
    for _ in range(turns):
        if states and rng.random() < 0.05:
            states.append(copy.deepcopy(states[-2] if len(states) > 1 else states[-1]))
        else:
            states.append(workflow.serialize())
        for _ in range(rng.randint(1, 4)):
            workflow.edit()
    return states


async def store_all(states: list[dict[str, Any]], folder: Path) -> dict[str, Any]:
    store = await Store.open(folder)
    try:
        await store.write(
            lambda db: db.execute(
                "INSERT INTO threads (id, created_at, updated_at) VALUES ('t', 0, 0)"
            )
        )
        await store.fetchall("PRAGMA wal_checkpoint(TRUNCATE)")
        empty = (folder / DB_NAME).stat().st_size
        checkpoints = Checkpoints(store)
        saves = []
        for turn, graph in enumerate(states):
            start = time.perf_counter()
            await checkpoints.save("t", f"a{turn}", "bench.json", graph)
            saves.append(time.perf_counter() - start)
        reads = []
        for turn in range(0, len(states), max(1, len(states) // 10)):
            start = time.perf_counter()
            await checkpoints.get("t", f"a{turn}")
            reads.append(time.perf_counter() - start)
        await store.fetchall("PRAGMA wal_checkpoint(TRUNCATE)")
        kept = await checkpoints.listed("t")
        blobs = await store.fetchone("SELECT COUNT(*) FROM checkpoint_blobs")
        return {
            "kept": len(kept),
            "blobs": int(blobs[0]) if blobs else 0,
            "stored": await checkpoints.stored_bytes("t"),
            "file_growth": (folder / DB_NAME).stat().st_size - empty,
            "save_ms": sorted(s * 1000 for s in saves),
            "read_ms": sorted(r * 1000 for r in reads),
        }
    finally:
        await store.close()


def _p95(values: list[float]) -> float:
    return values[min(len(values) - 1, int(0.95 * len(values)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=200)
    parser.add_argument("--turns", type=int, default=100)
    parser.add_argument("--quick", action="store_true", help="40 nodes, 12 turns (CI)")
    args = parser.parse_args()
    nodes, turns = (40, 12) if args.quick else (args.nodes, args.turns)
    states = graphs(nodes, turns)
    texts = [compact_json(s).encode() for s in (states[0], states[-1])]
    root = len(states[-1]["nodes"])
    print(f"{nodes}-node workflow ({root} root nodes at the end), {turns} turns")
    for label, text in zip(("first", "last"), texts, strict=True):
        six, nine = zlib.compress(text, 6), zlib.compress(text, 9)
        start = time.perf_counter()
        for _ in range(5):
            zlib.compress(text, 9)
        nine_ms = (time.perf_counter() - start) / 5 * 1000
        start = time.perf_counter()
        for _ in range(5):
            zlib.compress(text, 6)
        six_ms = (time.perf_counter() - start) / 5 * 1000
        print(
            f"  {label} graph: {len(text) / 1024:.0f} KB raw, zlib 6: {len(six) / 1024:.1f} KB "
            f"({six_ms:.1f} ms), zlib 9: {len(nine) / 1024:.1f} KB ({nine_ms:.1f} ms)"
        )
    with tempfile.TemporaryDirectory() as folder:
        got = asyncio.run(store_all(states, Path(folder)))
    raw_total = sum(len(compact_json(s).encode()) for s in states)
    mb = got["stored"] / 1e6
    print(
        f"checkpoints kept: {got['kept']} of {turns} (bounds: {MAX_CHECKPOINTS} and "
        f"{MAX_THREAD_BYTES / (1 << 20):.0f} MB a thread), {got['blobs']} distinct graphs"
    )
    print(
        f"stored: {mb:.2f} MB compressed ({raw_total / 1e6:.1f} MB of graph JSON saved), "
        f"{got['stored'] / max(1, got['kept']) / 1024:.1f} KB a checkpoint; database file "
        f"+{got['file_growth'] / 1e6:.2f} MB"
    )
    save_p95, read_p95 = _p95(got["save_ms"]), _p95(got["read_ms"])
    print(
        f"save: median {statistics.median(got['save_ms']):.1f} ms, p95 {save_p95:.1f} ms; "
        f"read: median {statistics.median(got['read_ms']):.1f} ms, p95 {read_p95:.1f} ms"
    )
    print(f"TARGET stored_mb={mb:.2f} ({'PASS' if mb <= 4 else 'FAIL'}, <= 4 at 200x100)")
    print(f"TARGET save_ms_p95={save_p95:.1f} ({'PASS' if save_p95 < 50 else 'FAIL'}, < 50)")


if __name__ == "__main__":
    main()
