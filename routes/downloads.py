"""Model downloads (core/installs/downloads.py): every job's state, one job's, and a cancel.

There is no route that starts a download: the install flow starts one from a stored scan's
record (`service.downloads.start`), so no client can make the server fetch a URL of its
choosing.
"""

from __future__ import annotations

from aiohttp import web

from ..core.installs.downloads import Job
from ..core.service import AssistantService
from .common import guarded, not_found, query_int

BASE = "/api/assistant/installs/downloads"


def add_download_routes(table: web.RouteTableDef, service: AssistantService) -> None:
    downloads = service.downloads

    def job_of(request: web.Request) -> Job:
        job_id = request.match_info["id"]
        job = downloads.get(job_id)
        if job is None:
            raise not_found("download", id=job_id[:40])
        return job

    @table.get(BASE)
    @guarded
    async def every_job(request: web.Request) -> web.StreamResponse:
        return web.json_response({"jobs": [job.as_json() for job in downloads.jobs()]})

    @table.get(BASE + "/{id}")
    @guarded
    async def one_job(request: web.Request) -> web.StreamResponse:
        return web.json_response(job_of(request).as_json())

    @table.delete(BASE + "/{id}")
    @guarded
    async def cancel(request: web.Request) -> web.StreamResponse:
        job = job_of(request)
        discard = query_int(request, "discard", 0, 0, 1) == 1
        return web.json_response((await downloads.cancel(job, discard)).as_json())
