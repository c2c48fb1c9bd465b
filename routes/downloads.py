"""Model downloads (core/installs/downloads.py): starting some of a stored scan's missing
models by name, every job's state, one job's, and a cancel.

A start names a scan and model names only (core/installs/scan_downloads.py): the address,
folder and hash are the scan's record, so no client can make the server fetch a URL of its
choosing. Every name is checked before any job starts.
"""

from __future__ import annotations

from aiohttp import web

from ..core.installs import Job, requested_names, start_downloads
from ..core.service import AssistantService
from .common import guarded, not_found, query_int, read_json

BASE = "/api/assistant/installs/downloads"
BODY_LIMIT = 256 * 1024


def add_download_routes(table: web.RouteTableDef, service: AssistantService) -> None:
    def job_of(request: web.Request) -> Job:
        job_id = request.match_info["id"]
        job = service.downloads.get(job_id)
        if job is None:
            raise not_found("download", id=job_id[:40])
        return job

    @table.post(BASE)
    @guarded
    async def start(request: web.Request) -> web.StreamResponse:
        scan_id, names = requested_names(await read_json(request, BODY_LIMIT))
        result = service.install_scans.get(scan_id)
        if result is None:
            raise not_found("scan", id=scan_id)
        jobs = start_downloads(service.downloads, scan_id, result, names)
        return web.json_response({"scan": scan_id, "jobs": [job.as_json() for job in jobs]})

    @table.get(BASE)
    @guarded
    async def every_job(request: web.Request) -> web.StreamResponse:
        return web.json_response({"jobs": [job.as_json() for job in service.downloads.jobs()]})

    @table.get(BASE + "/{id}")
    @guarded
    async def one_job(request: web.Request) -> web.StreamResponse:
        return web.json_response(job_of(request).as_json())

    @table.delete(BASE + "/{id}")
    @guarded
    async def cancel(request: web.Request) -> web.StreamResponse:
        job = job_of(request)
        discard = query_int(request, "discard", 0, 0, 1) == 1
        return web.json_response((await service.downloads.cancel(job, discard)).as_json())
