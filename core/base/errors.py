"""Errors every layer may raise toward the routes."""

from __future__ import annotations

from .error_codes import Message, coded_of


class RequestError(ValueError):
    """The client sent something we cannot use; the message is safe to show. `status`: the
    HTTP status a route answers with."""

    status = 400

    def __init__(self, message: Message) -> None:
        super().__init__(str(message))
        self.coded = coded_of(message)


class TooMuch(RequestError):
    """A request holding more of something than the server takes (413)."""

    status = 413
