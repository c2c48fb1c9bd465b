"""Scans kept in memory under an id, so that an install names packs and models of a scan by
name: what gets installed or downloaded is what the scan found, never a URL of the caller's.
Bounded: the oldest scan is dropped past `limit`."""

from __future__ import annotations

import secrets
from collections import OrderedDict

from .scan import ScanResult


class ScanStore:
    def __init__(self, limit: int = 32) -> None:
        self.limit = limit
        self._scans: OrderedDict[str, ScanResult] = OrderedDict()

    def add(self, result: ScanResult) -> str:
        scan_id = "scan_" + secrets.token_urlsafe(9)
        self._scans[scan_id] = result
        while len(self._scans) > self.limit:
            self._scans.popitem(last=False)
        return scan_id

    def get(self, scan_id: str) -> ScanResult | None:
        return self._scans.get(scan_id)
