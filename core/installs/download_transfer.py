"""One model's bytes: streamed into `<target>.part` in chunks (memory stays flat whatever the
size), resumed with `Range: bytes=N-` from a part left before, verified against its sha256 when
known (hashed as it is written; a resumed part is hashed first), renamed onto the target at the
end. Writing and hashing run in a worker thread: a slow disk never stalls ComfyUI's loop.

A dropped connection is resumed a few times on its own; a cancel (the task cancelled) keeps the
part for a later resume. Every failure is a DownloadError with a coded message.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import shutil
from pathlib import Path
from typing import IO

import aiohttp
from yarl import URL

from ..base import Coded, coded
from ..store import is_disk_full
from .download_checks import DownloadError, Origins, Plan
from .download_progress import Progress, human_size

log = logging.getLogger("comfyui_assistant")

CHUNK = 1 << 20  # bytes written (and hashed) at a time
READ = 1 << 16
MAX_REDIRECTS = 5
RETRIES = 3  # resumes in a row that get no byte further before the job fails
RETRY_SECONDS = 0.5
REDIRECTS = (301, 302, 303, 307, 308)
HEADERS = {"Accept-Encoding": "identity", "User-Agent": "ComfyUI-Assistant"}
TIMEOUT = aiohttp.ClientTimeout(total=None, sock_connect=30, sock_read=60)

Versions = dict[Path, str]


class _Dropped(Exception):
    """The connection failed or ended early: resumable."""


class _Restart(Exception):
    """The part cannot be continued (the server ignored Range, or the part is bad)."""


class _WriteFailed(Exception):
    """Writing the part failed (an OSError of the disk, not of the connection)."""

    def __init__(self, error: OSError) -> None:
        super().__init__(str(error))
        self.error = error


class Digest:
    """The sha256 of the part's first `size` bytes, when a hash is to be checked."""

    def __init__(self, wanted: bool) -> None:
        self.wanted = wanted
        self.hasher = hashlib.sha256()
        self.size = 0

    def reset(self) -> None:
        self.hasher, self.size = hashlib.sha256(), 0

    def update(self, data: bytes | bytearray) -> None:
        if self.wanted:
            self.hasher.update(data)
        self.size += len(data)


async def download(
    session: aiohttp.ClientSession,
    plan: Plan,
    origins: Origins,
    progress: Progress,
    versions: Versions,
) -> None:
    """The file at `plan.target`, or a DownloadError (the part kept where it can resume).
    `versions` holds, per target, the version (ETag or Last-Modified) its part's bytes are of:
    a resume asks for the rest only if the file is still that version (If-Range)."""
    digest = Digest(plan.sha256 is not None)
    retries, restarted = 0, False
    while True:
        have = _size(plan.part)
        if digest.size != have:  # a part from before: hash what it holds first
            progress.verifying = True
            await asyncio.to_thread(_hash_part, plan.part, have, digest)
            progress.verifying = False
        progress.restart(have)
        received = progress.received
        try:
            await _attempt(session, plan, origins, progress, digest, versions)
            break
        except _Restart:
            if restarted:
                raise DownloadError(_status_error(plan, 416)) from None
            restarted = True
            plan.part.unlink(missing_ok=True)
            digest.reset()
        except _Dropped as exc:
            retries = 1 if progress.received > received else retries + 1
            if retries > RETRIES:
                raise _dropped_error(plan, progress) from exc
            log.info("the download of %s dropped (%s); resuming", plan.name, exc)
            await asyncio.sleep(RETRY_SECONDS * retries)
    await _finish(plan, progress, digest)


async def _attempt(
    session: aiohttp.ClientSession,
    plan: Plan,
    origins: Origins,
    progress: Progress,
    digest: Digest,
    versions: Versions,
) -> None:
    """One request, its body appended to the part (or written from 0)."""
    have = digest.size
    headers = dict(HEADERS)
    if have:
        headers["Range"] = f"bytes={have}-"
        if plan.target in versions:  # (else a part from before this process: Range alone)
            headers["If-Range"] = versions[plan.target]
    try:
        async with await _open(session, plan, origins, headers) as resp:
            start = _start_of(resp, plan, progress, have)
            if start is None:  # 416: the part is complete
                return
            _check_room(plan, progress, start)
            _note_version(versions, plan.target, resp)
            if start == 0:
                digest.reset()
            await _write(resp, plan, progress, start, digest)
    except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
        raise _Dropped(repr(exc)) from exc
    if progress.total is not None and progress.done != progress.total:
        raise _Dropped(f"the body ended at {progress.done} of {progress.total} bytes")


async def _open(
    session: aiohttp.ClientSession, plan: Plan, origins: Origins, headers: dict[str, str]
) -> aiohttp.ClientResponse:
    """The response, after the redirects it is allowed to follow."""
    url = plan.url
    for _ in range(MAX_REDIRECTS + 1):
        resp = await session.get(url, headers=headers, allow_redirects=False)
        if resp.status not in REDIRECTS:
            return resp
        location = resp.headers.get("Location", "")
        resp.release()
        try:
            moved = url.join(URL(location))
        except ValueError:
            raise DownloadError(_status_error(plan, resp.status)) from None
        url = origins.check_redirect(moved, plan.name, plan.host)
    raise DownloadError(
        coded("download.too_many_redirects", name=plan.name, host=plan.host, limit=MAX_REDIRECTS)
    )


def _start_of(
    resp: aiohttp.ClientResponse, plan: Plan, progress: Progress, have: int
) -> int | None:
    """Where the body starts in the file (0 or `have`); None when the part is already whole."""
    if resp.status == 416 and have:
        total = _range_total(resp.headers.get("Content-Range", "")) or plan.size
        if total != have:
            raise _Restart()
        progress.total = total
        return None
    if resp.status == 206 and have:
        first, total = _content_range(resp.headers.get("Content-Range", ""))
        if first != have:
            raise _Restart()
        progress.total = total
        start = have
    elif resp.status == 200:
        progress.total = resp.content_length
        start = 0  # (a server that ignored Range sends it all: start over)
    else:
        raise DownloadError(_status_error(plan, resp.status))
    if resp.content_type == "text/html":  # a login or error page, not a model
        raise DownloadError(
            coded("download.web_page", name=plan.name, host=plan.host, folder=plan.folder)
        )
    progress.restart(start)
    return start


def _note_version(versions: Versions, target: Path, resp: aiohttp.ClientResponse) -> None:
    """The version of the file the part's bytes are now of: a strong ETag, or Last-Modified."""
    etag = resp.headers.get("ETag", "")
    version = etag if etag and not etag.startswith("W/") else resp.headers.get("Last-Modified")
    if version:
        versions[target] = version
    else:
        versions.pop(target, None)


def _content_range(value: str) -> tuple[int | None, int | None]:
    """`bytes 100-199/1000` -> (100, 1000); a total of `*` is None."""
    try:
        unit, _, rest = value.partition(" ")
        span, _, total = rest.partition("/")
        first = int(span.split("-")[0])
        return (first if unit == "bytes" else None), (int(total) if total != "*" else None)
    except ValueError:
        return None, None


def _range_total(value: str) -> int | None:
    """The total of a 416's `bytes */1000`."""
    total = value.rpartition("/")[2]
    return int(total) if total.isdigit() else None


def _check_room(plan: Plan, progress: Progress, start: int) -> None:
    """Refuse before writing when the disk has less room than what is still to come."""
    total = progress.total if progress.total is not None else plan.size
    if total is None:
        return
    needed = total - start
    free = shutil.disk_usage(_existing_parent(plan.target)).free
    if needed > free:
        raise DownloadError(
            coded(
                "download.no_space",
                name=plan.name,
                folder=plan.folder,
                needed=human_size(needed),
                free=human_size(free),
            )
        )


def _existing_parent(path: Path) -> Path:
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


async def _write(
    resp: aiohttp.ClientResponse, plan: Plan, progress: Progress, start: int, digest: Digest
) -> None:
    """The body into the part (appended at `start`, or from 0)."""
    try:
        handle = await asyncio.to_thread(_open_part, plan.part, start)
    except OSError as exc:
        raise _write_error(plan, exc) from exc
    writer = _PartWriter(handle, digest, progress)
    try:
        try:
            async for data in resp.content.iter_chunked(READ):
                await writer.add(data)
        except (aiohttp.ClientError, asyncio.TimeoutError):
            await writer.flush()  # what came before the drop is kept for the resume
            raise
        await writer.flush()
    except _WriteFailed as exc:
        raise _write_error(plan, exc.error) from exc.error
    finally:
        await writer.close()


class _PartWriter:
    """Appends to the open part in a worker thread, CHUNK bytes at a time."""

    def __init__(self, handle: IO[bytes], digest: Digest, progress: Progress) -> None:
        self.handle, self.digest, self.progress = handle, digest, progress
        self.buffer = bytearray()
        self.pending: asyncio.Future[None] | None = None

    async def add(self, data: bytes) -> None:
        self.buffer += data
        if len(self.buffer) >= CHUNK:
            await self.flush()

    async def flush(self) -> None:
        if not self.buffer:
            return
        data, self.buffer = self.buffer, bytearray()
        self.pending = asyncio.ensure_future(
            asyncio.to_thread(_append, self.handle, data, self.digest)
        )
        await asyncio.shield(self.pending)  # (a cancel lets the write end: see close)
        self.progress.advance(len(data))

    async def close(self) -> None:
        if self.pending is not None and not self.pending.done():
            await asyncio.wait({self.pending})
        await asyncio.to_thread(self.handle.close)


def _open_part(part: Path, start: int) -> IO[bytes]:
    part.parent.mkdir(parents=True, exist_ok=True)
    if start == 0:
        return part.open("wb")
    handle = part.open("r+b")
    handle.seek(start)
    return handle


def _append(handle: IO[bytes], data: bytearray, digest: Digest) -> None:
    try:
        handle.write(data)
    except OSError as exc:
        raise _WriteFailed(exc) from exc
    digest.update(data)


def _hash_part(path: Path, size: int, digest: Digest) -> None:
    """`digest` set to the part's first `size` bytes (the whole part, read once)."""
    digest.reset()
    if size and digest.wanted:
        with path.open("rb") as handle:
            while block := handle.read(CHUNK):
                digest.hasher.update(block)
    digest.size = size


async def _finish(plan: Plan, progress: Progress, digest: Digest) -> None:
    """Check the hash, then fsync and rename the part onto the target."""
    progress.verifying = True
    if plan.sha256 is not None:
        got = digest.hasher.hexdigest()
        if got != plan.sha256:
            plan.part.unlink(missing_ok=True)
            raise DownloadError(
                coded("download.hash_mismatch", name=plan.name, expected=plan.sha256, got=got)
            )
    try:
        await asyncio.to_thread(_commit, plan.part, plan.target)
    except OSError as exc:
        raise _write_error(plan, exc) from exc


def _commit(part: Path, target: Path) -> None:
    with part.open("rb+") as handle:
        os.fsync(handle.fileno())
    os.replace(part, target)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def _write_error(plan: Plan, exc: OSError) -> DownloadError:
    if is_disk_full(exc):
        return DownloadError(coded("download.disk_full", name=plan.name, folder=plan.folder))
    reason = exc.strerror or str(exc)
    return DownloadError(
        coded("download.write_failed", name=plan.name, folder=plan.folder, reason=reason)
    )


def _status_error(plan: Plan, status: int) -> Coded:
    return coded("download.http_status", name=plan.name, host=plan.host, status=status)


def _dropped_error(plan: Plan, progress: Progress) -> DownloadError:
    if progress.received == 0 and progress.done == 0:
        return DownloadError(coded("download.unreachable", name=plan.name, host=plan.host))
    return DownloadError(
        coded(
            "download.interrupted", name=plan.name, host=plan.host, done=human_size(progress.done)
        )
    )
