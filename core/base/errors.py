"""Errors every layer may raise toward the routes."""

from __future__ import annotations

from .error_codes import Coded, Message, coded_of


class CodedError(Exception):
    """An error whose message is safe to show: `message` its text, `coded` its code and
    parameters where it has them (error_codes.py: the panel shows it in the user's language)."""

    def __init__(self, message: Message) -> None:
        super().__init__(str(message))
        self.message = str(message)
        self.coded: Coded | None = coded_of(message)


class AlwaysCoded(CodedError):
    """A CodedError whose message always has a code."""

    coded: Coded

    def __init__(self, message: Coded) -> None:
        super().__init__(message)


class StatusError(CodedError):
    """A CodedError that carries the HTTP `status` a route answers it with."""

    def __init__(self, status: int, message: Message) -> None:
        super().__init__(message)
        self.status = status


class RequestError(CodedError, ValueError):
    """The client sent something we cannot use; the message is safe to show. `status`: the
    HTTP status a route answers with."""

    status = 400


class TooMuch(RequestError):
    """A request holding more of something than the server takes (413)."""

    status = 413
