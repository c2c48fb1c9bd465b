"""Python's cyclic garbage collector paused around an allocation burst that makes no cycles.

Parsing a long thread's request body and assembling its context each make tens of thousands
of container objects, none in a reference cycle. Each burst sets off collections of the young
generation and, as they pile up, full collections that walk the whole heap: in a ComfyUI
process the heap is large, so a full collection costs far more than the work that set it off,
and it grows with the heap, not with the work. Reference counting frees everything as usual
while the collector waits; it resumes when the block returns (or raises), and an application
that turned it off keeps it off.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
