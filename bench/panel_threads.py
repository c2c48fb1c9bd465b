"""The panel with long threads (issue 38), in the browser: runs `ui/e2e/longthreads.bench.mjs`
(the real panel in the playground, headless Chromium, our server and the scripted provider; each
thread built through POST /api/assistant/chat) and prints what it prints.

    .venv/bin/python bench/panel_threads.py [--quick] [--turns 10,1000,3000] [--runs 3]
                                            [--words 5000]

Per size: opening the thread (to its last message shown) and the longest task meanwhile, the JS
heap, the panel's DOM nodes, keystroke input-to-paint (median, p95), 20 characters typed, the
longest frame over 30 mouse moves and a scroll to the top, a streamed answer (long tasks, the
longest, the mean frame, keystrokes meanwhile), Enter to the request leaving and its bytes,
reopening the thread after another was shown and reloading the page (each to the page settled:
its last message shown and the long tasks begun up to a second after it ended); TARGET lines for
the largest size. `--quick`: 200 turns, one run, 300 words (about 30 s). Needs node,
Chromium and the built panel and playground, as ui/e2e does (ui/e2e/README.md)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

UI = Path(__file__).resolve().parent.parent / "ui"


def main(argv: list[str]) -> int:
    node = shutil.which("node")
    if node is None:
        print("node is not installed: the bench runs the panel in Chromium through node")
        return 1
    return subprocess.call([node, "e2e/longthreads.bench.mjs", *argv], cwd=UI)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
