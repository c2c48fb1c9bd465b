"""Meaning, for looking back: static word embeddings turn a passage into a vector, so that a
question finds the message that answers it when the two share no word ("what hobby did my kid
pick back up?" for "my daughter started painting again"). core/memory/recall.py fuses this
ranking with BM25's; bench/recall_paraphrase.py measured the choice.

The model is wordllama's l2_supercat (256 dimensions), whose weights and tokenizer ship in its
wheel: loaded from the package's own folder with downloads disabled, so it works offline. It is
optional (`pip install "comfyui-assistant[semantic]"`, or `pip install wordllama==0.4.0.post1`
beside ComfyUI): it needs numpy 2, and installing it by default could upgrade numpy under other
custom nodes pinned to 1.x. Without it, or with COMFY_ASSISTANT_NO_EMBEDDINGS=1, search is by
words only. Loaded once per process, on a worker thread (0.35 s: the event loop never waits);
a failure to load is logged once, and search stays lexical.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import importlib
import importlib.util
import logging
import os
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

log = logging.getLogger("comfyui_assistant")

NO_EMBEDDINGS = "COMFY_ASSISTANT_NO_EMBEDDINGS"  # =1: search by words only
PACKAGE = "wordllama"
# Vectors are stored as float32 (1 KB a passage): float16 ranks the same on the paraphrase bench
# (20/30 and 27/30 found either way) in half the bytes, but each search would convert every
# vector back (numpy computes in float32): reading 2,500 of them took 1.6 ms against 0.9.
STORED = "float32"


class Embedder:
    """wordllama's model behind the two calls a search makes (typed: wordllama has no types)."""

    def __init__(self, model: Any) -> None:
        self._model = model
        self.texts_embedded = 0  # in this process (what a search had to compute: tests, benches)

    def vectors(self, texts: Sequence[str]) -> list[bytes]:
        """Each text's unit vector, as stored (`STORED` bytes)."""
        import numpy as np

        matrix = np.asarray(self._model.embed(list(texts), norm=True), dtype=STORED)
        self.texts_embedded += len(texts)
        return [row.tobytes() for row in matrix]

    def ranked(self, query: str, vectors: Sequence[bytes]) -> Iterator[tuple[int, float]]:
        """(index in `vectors`, cosine with `query`) of each vector, the nearest first (ranked
        here, yielded as read: a search reads a few dozen)."""
        import numpy as np

        if not vectors:
            return iter(())
        asked = np.asarray(self._model.embed([query], norm=True)[0], dtype=STORED)
        matrix = np.frombuffer(b"".join(vectors), dtype=STORED).reshape(len(vectors), -1)
        # (not `matrix @ asked`: numpy hands that to BLAS, whose threads, woken at each search,
        # took 10-15 ms on a busy 2-core machine, against 0.06 ms for einsum's own loop)
        scores = np.einsum("ij,j->i", matrix, asked)
        order = np.argsort(-scores, kind="stable")
        return ((int(i), float(scores[i])) for i in order)


_lock = threading.Lock()
_tried = False
_loaded: Embedder | None = None


def available() -> bool:
    """Whether search may use embeddings here: wordllama is installed and not switched off."""
    return os.environ.get(NO_EMBEDDINGS) != "1" and _installed()


@functools.cache
def _installed() -> bool:
    return importlib.util.find_spec(PACKAGE) is not None  # (without importing it)


async def embedder() -> Embedder | None:
    """The model, loaded on first use; None where `available()` is not, or it failed to load."""
    if not available():
        return None
    if _tried:
        return _loaded
    return await asyncio.to_thread(_load_once)


def _load_once() -> Embedder | None:
    global _tried, _loaded
    with _lock:
        if not _tried:
            _loaded = _load()
            _tried = True
        return _loaded


def _load() -> Embedder | None:
    try:
        with _logging_kept():
            module = importlib.import_module(PACKAGE)
        folder = Path(module.__file__ or "").parent  # its tokenizer and weights ship there
        model = module.WordLlama.load(cache_dir=folder, disable_download=True)
    except Exception as exc:  # (a broken install: any error; search stays lexical)
        log.warning(
            "ComfyUI Assistant: %s could not be loaded (%s: %s); earlier messages are "
            "searched by their words only",
            PACKAGE,
            type(exc).__name__,
            exc,
        )
        return None
    return Embedder(model)


@contextlib.contextmanager
def _logging_kept() -> Iterator[None]:
    """The process's logging as it was: wordllama calls `logging.basicConfig(level=INFO)`
    when imported, which on a process without handlers (the standalone server, a bench)
    turned on every library's INFO lines."""
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    try:
        yield
    finally:
        root.setLevel(level)
        for handler in [h for h in root.handlers if h not in handlers]:
            root.removeHandler(handler)
