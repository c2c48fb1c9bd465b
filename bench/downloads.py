"""The model downloader (core/installs/downloads.py) on a big file: throughput, and the peak
memory it adds while it streams the file to disk in chunks and hashes it.

    .venv/bin/python bench/downloads.py [--quick] [--mb N]

The model host (tests/model_server.py: a generated file, HTTP Range) runs in a process of its
own on 127.0.0.1, so this process's RSS is the downloader's: its peak (VmHWM, cleared before
the download) less the RSS before it. For contrast the same file is then read whole into memory
with aiohttp (what a downloader without chunks would hold). `--quick` (CI) downloads 64 MB;
the full run 512 MB. Prints TARGET lines: the peak growth (a guard: <= 32 MB, the size must not
matter), the throughput (>= 20 MB/s over loopback), the file's sha256 equal to the host's.
Exit code 0 even when a target is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import sys
import tempfile
import time
from pathlib import Path

import aiohttp
from comfyui_assistant.core.installs.download_checks import DownloadSpec, Origins
from comfyui_assistant.core.installs.downloads import Downloads
from comfyui_assistant.core.installs.model_folders import ModelFolders

RSS_TARGET_MB = 32
SPEED_TARGET = 20  # MB/s over loopback


def memory_mb(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field}")


def clear_peak() -> None:
    try:  # (Linux: "5" resets the peak resident set to the current one)
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        print("(could not reset the peak RSS: the peak growth counts from the start)")


async def serve(size: int) -> None:
    """The host process: prints its origin and the file's sha256, then serves until killed."""
    from comfyui_assistant.tests.model_server import ModelServer, model_bytes

    host = await ModelServer(model_bytes(size)).start()
    print(host.origin, host.sha256, flush=True)
    await asyncio.Event().wait()


def file_sha256(path: Path) -> str:
    hasher = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            hasher.update(block)
    return hasher.hexdigest()


async def measure(origin: str, sha256: str, folder: Path) -> tuple[float, float, str]:
    """Seconds, peak RSS growth (MB) and the file's sha256 of one download."""
    downloads = Downloads(
        ModelFolders.standalone(folder),
        Origins.from_environ({"COMFY_ASSISTANT_MODEL_ORIGINS": origin}),
    )
    spec = DownloadSpec(
        origin + "/file/big.safetensors", "checkpoints", "big.safetensors", None, sha256
    )
    before = memory_mb("VmRSS")
    clear_peak()
    started = time.monotonic()
    job = downloads.start(spec)
    assert job.task is not None
    await job.task
    seconds = time.monotonic() - started
    growth = memory_mb("VmHWM") - before
    await downloads.close()
    if job.state != "done":
        raise SystemExit(f"the download ended {job.state}: {job.error}")
    return seconds, growth, file_sha256(folder / "models" / "checkpoints" / "big.safetensors")


async def whole_in_memory(origin: str) -> float:
    """The peak RSS growth (MB) of reading the same file whole with aiohttp."""
    async with aiohttp.ClientSession() as session:
        before = memory_mb("VmRSS")
        clear_peak()
        async with session.get(origin + "/file/big.safetensors") as resp:
            body = await resp.read()
        growth = memory_mb("VmHWM") - before
        del body
    return growth


async def run(size_mb: int) -> None:
    host = await asyncio.create_subprocess_exec(
        sys.executable, __file__, "--serve", str(size_mb), stdout=asyncio.subprocess.PIPE
    )
    try:
        assert host.stdout is not None
        origin, sha256 = (await host.stdout.readline()).decode().split()
        with tempfile.TemporaryDirectory() as tmp:
            seconds, growth, got = await measure(origin, sha256, Path(tmp))
        whole = await whole_in_memory(origin)
    finally:
        host.terminate()
        await host.wait()
    speed = size_mb / seconds
    print(f"{size_mb} MB from {origin} in {seconds:.2f} s: {speed:.0f} MB/s")
    print(f"peak RSS growth: downloader +{growth:.1f} MB; the file read whole +{whole:.0f} MB")
    verdict = "met" if growth <= RSS_TARGET_MB else "MISSED"
    print(f"TARGET download_rss_growth_mb={growth:.1f} (<= {RSS_TARGET_MB}): {verdict}")
    verdict = "met" if speed >= SPEED_TARGET else "MISSED"
    print(f"TARGET download_mb_per_s={speed:.0f} (>= {SPEED_TARGET} over loopback): {verdict}")
    print(f"TARGET download_sha256_equal={got == sha256}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="64 MB (CI)")
    parser.add_argument("--mb", type=int, default=None, help="the file's size (default 512)")
    parser.add_argument("--serve", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve is not None:
        asyncio.run(serve(args.serve << 20))
        return
    asyncio.run(run(args.mb or (64 if args.quick else 512)))


if __name__ == "__main__":
    main()
