"""The model downloader: jobs the install flow starts from a stored scan's records, two at a
time, one per target file, listed with their state for as long as the process runs.

`Downloads.start(spec)` is the only way in: it takes a `DownloadSpec` (a scan's record), never
a URL from a client; the routes only list and cancel. A job goes `queued` -> `downloading`
(-> `verifying` while the part is hashed) -> `done`, or ends `failed` (with a coded error) or
`cancelled` (its part kept for a resume unless discarded). A target already on disk is `done`
at once, without a request.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

from ..base import DOWNLOADS, Coded, client_session, coded
from .download_checks import DownloadError, DownloadSpec, Origins, Plan, plan
from .download_progress import Progress
from .download_transfer import TIMEOUT, Versions, download
from .model_folders import ModelFolders

log = logging.getLogger("comfyui_assistant")

QUEUED, DOWNLOADING, VERIFYING = "queued", "downloading", "verifying"
DONE, FAILED, CANCELLED = "done", "failed", "cancelled"
RUNNING = (QUEUED, DOWNLOADING)
PARALLEL = 2

__all__ = ["DownloadError", "DownloadSpec", "Downloads", "Job"]


@dataclass(eq=False)
class Job:
    id: str
    plan: Plan
    state: str = QUEUED
    progress: Progress = field(default_factory=Progress)
    error: Coded | None = None
    present: bool = False  # the file was there already: nothing was downloaded
    discard: bool = False  # a cancel that also deletes the part
    started: float = field(default_factory=time.time)
    finished: float | None = None
    task: asyncio.Future[None] | None = None

    def as_json(self) -> dict[str, Any]:
        plan, progress = self.plan, self.progress
        state = VERIFYING if self.state == DOWNLOADING and progress.verifying else self.state
        eta = progress.eta() if state == DOWNLOADING else None
        return {
            "id": self.id,
            "state": state,
            "url": str(plan.url),
            "host": plan.host,
            "folder": plan.folder,
            "name": plan.name,
            "pickle": plan.pickle,
            "sha256": plan.sha256,
            "size": plan.size,
            "bytesDone": progress.done,
            "bytesTotal": progress.total if progress.total is not None else plan.size,
            "bytesPerSecond": round(progress.speed()) if state == DOWNLOADING else 0,
            "etaSeconds": round(eta, 1) if eta is not None else None,
            "alreadyPresent": self.present,
            "partKept": self.state in (FAILED, CANCELLED) and plan.part.is_file(),
            "error": self.error.as_json() if self.error else None,
            "started": self.started,
            "finished": self.finished,
        }


class Downloads:
    """Every download of this process; at most `parallel` transfer at once."""

    def __init__(self, folders: ModelFolders, origins: Origins, parallel: int = PARALLEL) -> None:
        self.folders, self.origins = folders, origins
        self._slots = asyncio.Semaphore(parallel)
        self._jobs: dict[str, Job] = {}
        self._active: dict[Path, Job] = {}  # target -> its queued or running job
        self._versions: Versions = {}  # target -> the file's version its part holds
        self._session: aiohttp.ClientSession | None = None

    def start(self, spec: DownloadSpec) -> Job:
        """A job for `spec` (checked first: DownloadError if it may not be downloaded); the
        running job of the same target if there is one. Call it on the event loop."""
        checked = plan(spec, self.origins, self.folders)
        current = self._active.get(checked.target)
        if current is not None:
            return current
        job = Job(secrets.token_hex(6), checked)
        self._jobs[job.id] = job
        if self.folders.existing(checked.folder, checked.name) is not None:
            job.state, job.present, job.finished = DONE, True, time.time()
            return job
        self._active[checked.target] = job
        job.task = asyncio.ensure_future(self._run(job))
        return job

    def jobs(self) -> list[Job]:
        return list(self._jobs.values())

    def get(self, job_id: str) -> Job | None:
        return self._jobs.get(job_id)

    async def cancel(self, job: Job, discard: bool = False) -> Job:
        """Stop a queued or running job; `discard` also deletes its part (a failed or cancelled
        job's too). A finished download is left as it is."""
        if job.state in RUNNING and job.task is not None:
            job.discard = discard
            job.task.cancel()
            await asyncio.wait({job.task})
        elif discard and job.state in (FAILED, CANCELLED) and job.plan.target not in self._active:
            await asyncio.to_thread(job.plan.part.unlink, missing_ok=True)
        return job

    async def _run(self, job: Job) -> None:
        try:
            async with self._slots:
                job.state = DOWNLOADING
                session = await self._client()
                await download(session, job.plan, self.origins, job.progress, self._versions)
            job.state = DONE
        except DownloadError as exc:
            job.state, job.error = FAILED, exc.coded
            log.warning("downloading %s failed: %s", job.plan.name, exc)
        except asyncio.CancelledError:
            job.state = CANCELLED
            if job.discard:
                job.plan.part.unlink(missing_ok=True)
        except Exception:
            log.exception("downloading %s failed", job.plan.name)
            job.state, job.error = FAILED, coded("server.internal")
        finally:
            job.finished = time.time()
            if self._active.get(job.plan.target) is job:
                del self._active[job.plan.target]

    async def _client(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            # no cookies kept, no decompression (the bytes as served: the hash is of those)
            self._session = client_session(
                DOWNLOADS,
                timeout=TIMEOUT,
                auto_decompress=False,
                cookie_jar=aiohttp.DummyCookieJar(),
            )
        return self._session

    async def close(self) -> None:
        """Stop every job (parts kept) and close the HTTP client."""
        running = [job.task for job in self._jobs.values() if job.task and not job.task.done()]
        for task in running:
            task.cancel()
        if running:
            await asyncio.wait(running)
        if self._session is not None:
            await self._session.close()
            self._session = None
