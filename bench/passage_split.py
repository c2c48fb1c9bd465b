"""How a document without paragraph breaks or spaces is split into passages: the count, the
largest passage in tokens (at most MAX_PASSAGE_TOKENS by design) and the time to split, for
500 KB documents of one word, of a run of CJK characters, of base64, and of prose.

    PYTHONPATH=... .venv/bin/python bench/passage_split.py [--quick]

TARGET: the largest passage of each document is at most MAX_PASSAGE_TOKENS. `--quick` splits
50 KB documents (CI).
"""

from __future__ import annotations

import argparse
import base64
import random
import time

from comfyui_assistant.core.tokens.passages import MAX_PASSAGE_TOKENS, split_passages
from comfyui_assistant.core.tokens.tokens import TokenCounter, counter_for


def documents(size: int) -> dict[str, str]:
    rng = random.Random(7)
    word = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(size))
    cjk = "".join(
        rng.choice("的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分")
        for _ in range(size // 3)
    )
    blob = base64.b64encode(rng.randbytes(size * 3 // 4)).decode()
    sentence = "The sampler runs twenty steps at a CFG of seven on the refined latent. "
    prose = (sentence * (size // len(sentence)))[:size]
    return {"one word": word, "CJK run": cjk, "base64": blob, "prose, no breaks": prose}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="50 KB documents (CI)")
    args = parser.parse_args()
    count = counter_for(None)
    print(f"counter: {count.name}; MAX_PASSAGE_TOKENS = {MAX_PASSAGE_TOKENS}")
    worst = 0
    for name, text in documents(50_000 if args.quick else 500_000).items():
        fresh = TokenCounter(count.encoding)  # (a document's first split: nothing remembered)
        start = time.perf_counter()
        passages = split_passages(text, fresh)
        seconds = time.perf_counter() - start
        largest = max(tokens for _, tokens in passages)
        worst = max(worst, largest)
        print(
            f"{name:18} {len(text.encode()):>8,} bytes: {len(passages):>6,} passages, "
            f"largest {largest:>7,} tokens, {seconds:6.2f} s"
        )
    verdict = "PASS" if worst <= MAX_PASSAGE_TOKENS else "FAIL"
    print(f"TARGET largest_passage_tokens={worst} ({verdict}, <= {MAX_PASSAGE_TOKENS})")


if __name__ == "__main__":
    main()
