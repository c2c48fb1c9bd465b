"""One user's view of the process's downloads: the jobs this user started, nobody else's.

Every user's downloads go into the same model folders through one `Downloads` (two transfers at
once for the whole ComfyUI; a model two users want is fetched once). A user lists, reads and
cancels only the jobs they started; another user's job id is unknown to them (404).
"""

from __future__ import annotations

from .download_checks import DownloadSpec
from .downloads import Downloads, Job


class UserDownloads:
    def __init__(self, downloads: Downloads) -> None:
        self.all = downloads
        self.origins, self.folders = downloads.origins, downloads.folders
        self._started: set[str] = set()

    def start(self, spec: DownloadSpec) -> Job:
        job = self.all.start(spec)
        self._started.add(job.id)
        return job

    def jobs(self) -> list[Job]:
        return [job for job in self.all.jobs() if job.id in self._started]

    def get(self, job_id: str) -> Job | None:
        return self.all.get(job_id) if job_id in self._started else None

    async def cancel(self, job: Job, discard: bool = False) -> Job:
        return await self.all.cancel(job, discard)
