"""Errors every layer may raise toward the routes."""

from __future__ import annotations


class RequestError(ValueError):
    """The client sent something we cannot use; the message is safe to show."""
