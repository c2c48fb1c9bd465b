"""The errors a panel user can meet, by code: the English template of each (`{name}` for a
parameter). The server sends the English text built from it, with the code and parameters
beside it, so the panel can show the text in the user's language (ui/src/i18n/messages.ts has
an `error.<code>` key for each, with the same English text, and an `error.word.<key>` for each
of WORDS: tests/test_error_codes.py).

Errors only a developer meets (a body of the wrong shape, malformed JSON) have no code."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from string import Formatter
from typing import Any

Param = str | int | float | bool | None

_SUPPORTED = (
    "attach images (PNG, JPEG, WebP, GIF), ComfyUI workflows (.json, or a PNG or WebP ComfyUI "
    "saved) and text files (.txt, .md, .csv, .yaml, …)"
)
_FIX_IN_SETTINGS = "choose an installed model or check the base URL in Settings"
_V1_ENDPOINT = "check that the base URL points at an OpenAI-compatible /v1 endpoint"
_UNAUTHORIZED = "{name} rejected the request as unauthorized (HTTP {status}) — "
_NOT_KNOWN = "{name} at {url} does not know "
_REFUSED = "{name} refused the request (HTTP {status}: {detail})."

ERRORS: dict[str, str] = {
    # the provider (core/provider/provider.py describe_error, by ProviderError kind)
    "provider.timeout": (
        "{name} at {url} did not answer within {seconds} s — it may still be loading the model "
        "or be overloaded; try again, or raise timeoutSeconds in Settings."
    ),
    "provider.broken_stream": (
        "The connection to {subject} broke off in the middle of the answer — the part already "
        "shown is kept; try again."
    ),
    "provider.unreachable": (
        "{name} is not reachable at {url} — start it or set the provider in Settings."
    ),
    "provider.auth": _UNAUTHORIZED + "set a valid API key in Settings or LLM_API_KEY.",
    "provider.auth_redirected": _UNAUTHORIZED
    + "it redirected the request to {moved}, where the key is not sent (a key goes only to the "
    "address it was given for): set the base URL to the address it redirects to.",
    "provider.model_not_found": (
        _NOT_KNOWN + "model '{model}' (HTTP 404: {detail}) — " + _FIX_IN_SETTINGS + "."
    ),
    "provider.model_not_found_pull": (
        _NOT_KNOWN
        + "model '{model}' (HTTP 404: {detail}) — "
        + _FIX_IN_SETTINGS
        + " (for {name}: {command})."
    ),
    "provider.endpoint_not_found": (
        _NOT_KNOWN + "the endpoint (HTTP 404: {detail}) — " + _FIX_IN_SETTINGS + "."
    ),
    "provider.rate_limit": (
        "{name} is rate-limiting requests (HTTP 429: {detail}) — wait a moment and try again, "
        "or check your plan's limits."
    ),
    "provider.server": (
        "{name} failed with HTTP {status} ({detail}) — try again; if it keeps failing, look at "
        "the server's log."
    ),
    "provider.bad_request": _REFUSED,
    "provider.context_length": _REFUSED,
    "provider.stream_error": "{name} reported an error mid-answer: {detail}",
    "provider.malformed": (
        "{name} sent a malformed stream chunk that is not JSON — the answer stopped there; try "
        "again, and if it repeats, " + _V1_ENDPOINT + "."
    ),
    "provider.unknown": "The request to {name} failed unexpectedly ({error}) — try again.",
    "provider.no_model": (
        "{name} at {url} lists no models and none is configured — set LLM_MODEL or choose a "
        "model in Settings."
    ),
    "provider.empty": (
        "{name} at {url} answered, but sent no completion (an empty stream, or a web page "
        "instead of events) — " + _V1_ENDPOINT + ", and look at the server's log."
    ),
    # the context (core/provider/budget.py)
    "context.message_too_long": (
        "The latest message needs {needed} tokens but only {fit} fit in {model}'s context "
        "(window {window} from {source}, {reserve} reserved for the answer, {margin} margin, "
        "{tools} for tools) — shorten the message or raise the window (LLM_CONTEXT_WINDOW or "
        "Settings)."
    ),
    # one turn at a time in a thread (core/chat/turn_lock.py, core/chat/thread_delta.py)
    "chat.thread_busy": (
        "Another answer is being written in this thread (in another tab or window): your "
        "message was not sent. Wait for that answer, then send it again."
    ),
    "chat.thread_moved_on": (
        "This thread has new messages from another tab or window that this one did not show: "
        "your message was not sent. They are loaded now; send it again."
    ),
    "chat.thread_moved_on_kept": (
        "This thread has new messages from another tab or window that this one did not show: "
        "the tool's result was saved in the answer it belongs to, which was not continued. They "
        "are loaded now; ask again if the answer should go on."
    ),
    # the answer's stream (core/stream/sse.py)
    "stream.bug": (
        "The answer stopped on an error of ours ({error}) — this is a bug in the assistant: the "
        "log has the details."
    ),
    "stream.not_saved": (
        "This answer could not be saved ({error}), so it is not in the thread: copy what you "
        "need from it before you reload; the log has the details."
    ),
    "stream.failed": (
        "The answer failed on the server (an internal error, logged there) — the part shown "
        "is kept; try again."
    ),
    # attachments (core/files/attachment_files.py, core/chat/attachment_fit.py, routes)
    "attachment.too_large_for_window": (
        "{name} is about {tokens} tokens, but {model}'s {window}-token window has room for "
        "about {room} in one message (after the instructions, the tools and the answer's "
        "reserve). Attach a smaller file or the part that matters, or use a model with a "
        "larger window."
    ),
    "attachment.over_limit": "the file is larger than {limit}, the limit for an attachment",
    "attachment.too_big": "{name} is {size}; an attachment can be at most {limit}",
    "attachment.text_too_big": (
        "{name} is {size} of text; a text attachment can be at most {limit} (attach the part "
        "that matters)"
    ),
    "attachment.empty": "{name} is empty",
    "attachment.binary_kind": "{name} is a {kind}, which cannot be attached: " + _SUPPORTED,
    "attachment.unsupported": "{name}: {suffix} files cannot be attached; " + _SUPPORTED,
    "attachment.not_utf8": "{name} is not UTF-8 text; " + _SUPPORTED,
    "attachment.binary": "{name} is a binary file, not text; " + _SUPPORTED,
    "attachment.not_image": "{name} cannot be read: it is not a {format} image",
    "attachment.unreadable": "{name} cannot be read: {reason}",
    "attachment.no_workflow": "{name} holds no ComfyUI workflow",
    "attachment.no_workflow_why": "{name} holds no ComfyUI workflow ({why})",
    "attachment.workflow_not_finite": (
        "{name} holds a workflow with NaN or Infinity, which JSON has no value for: write "
        "numbers or null instead and attach it again"
    ),
    "attachment.sent": "attachment {id} is part of a sent message; it stays",
    # what a route looked for and did not find (routes/*.py)
    "not_found.thread": "thread {thread} does not exist",
    "not_found.message": "message {message} in thread {thread} does not exist",
    "not_found.branch": "branch {number} of thread {thread} does not exist",
    "not_found.attachment": "attachment {id} does not exist",
    "not_found.project": "project {project} does not exist",
    "not_found.document": "document {document} of project {project} does not exist",
    "not_found.delegation": "delegated task {call} in thread {thread} does not exist",
    "not_found.checkpoint": "a checkpoint of message {message} in thread {thread} does not exist",
    "not_found.download": "download {id} does not exist",
    "not_found.scan": (
        "scan {id} does not exist (the server keeps its last 32 scans until it restarts): scan "
        "the workflow again"
    ),
    # rewind and return to a branch (core/store/branches.py), 409
    "branch.answer_running": (
        "an answer is being written in this thread: stop it first, then rewind"
    ),
    "branch.after_set_aside": (
        "branch {number} followed a message that is itself set aside now: return to the branch "
        "that holds it first"
    ),
    "branch.overlaps": "branch {number} holds messages the thread has again",
    # the server itself (routes/common.py guarded)
    "server.disk_full": (
        "The disk holding ComfyUI Assistant's data is full: nothing was saved or changed. Free "
        "some space and try again (deleting threads you no longer need makes room in its "
        "database)."
    ),
    "server.database": "ComfyUI Assistant cannot use its database: {reason}",
    "server.internal": "internal error in ComfyUI Assistant; see the server log",
    # the provider's settings (core/provider/provider_config.py), as the Settings form sends them
    "settings.url_credentials": (
        "baseUrl must not contain a user name or password; put the key in the API key field "
        "(or LLM_API_KEY) instead"
    ),
    "settings.url_character": "baseUrl contains {character}; remove it",
    "settings.url_query": (
        "baseUrl must not have a query string or fragment ('?…', '#…'); use an http(s) URL "
        "such as {example} and put a key in the API key field"
    ),
    "settings.url_invalid": (
        "baseUrl is not a URL the HTTP client accepts ({reason}); use an http(s) URL such as "
        "{example}"
    ),
    "settings.url_no_scheme": ("baseUrl must start with http:// or https://, such as {example}"),
    "settings.url_scheme": "baseUrl must be an http(s) URL such as {example} (got {got})",
    "settings.url_port": "baseUrl's port must be between 1 and 65535 (got {got})",
    "settings.url_ascii": "baseUrl's host name must be ASCII (write an IDN in its xn-- form)",
    "settings.key_character": (
        "the API key contains {character} (U+{codepoint}) at position {position}, which no key "
        "has; paste it again without it"
    ),
    "settings.too_long": "{key} must be a string of at most 2000 characters",
    "settings.not_number": "{key} must be a number",
    "settings.not_whole": "{key} must be a whole number",
    "settings.out_of_range": "{key} must be between {low} and {high} (got {value})",
    # projects and their documents (core/files/projects.py)
    "project.name_empty": "'name' must be a non-empty string",
    "project.name_too_long": "'name' has {length} characters; a name has at most {limit}",
    "project.name_lines": "'name' must be one line of text, without control characters",
    "project.title_empty": "'title' must be a non-empty string",
    "project.title_too_long": "'title' has {length} characters; a title has at most {limit}",
    "project.title_control": "'title' must be text, without control characters",
    "project.document_too_big": (
        "the document is {size} bytes of UTF-8; the limit is {limit} bytes — split it into "
        "several documents"
    ),
    "project.text_control": (
        "'text' contains the control character U+{codepoint} at {position}: documents are "
        "plain text (a binary file cannot be pinned)"
    ),
    "project.text_empty": "'text' is empty; a document needs some text",
    "project.exists": "a project named '{name}' exists already",
    "project.too_many_documents": (
        "the project has {count} documents; a project holds at most {limit}"
    ),
    # missing nodes and models (core/installs, routes/installs.py)
    "installs.not_a_workflow": (
        "This is not a ComfyUI workflow: {why}. Send the workflow as ComfyUI saves it (an "
        'object with "nodes") or an API-format prompt (node ids with "class_type" and '
        '"inputs").'
    ),
    "installs.too_many_nodes": (
        "the workflow has {count} nodes (subgraphs included); a scan reads at most {limit}"
    ),
    "installs.body": (
        'send a JSON object with "workflow" (the workflow itself) or "attachment" (the id of an '
        "attached workflow file), not both"
    ),
    "installs.downloads_body": (
        'send a JSON object with "scan" (the id a scan gave) and "models" (1 to {limit} names '
        "of its missing models), nothing else: the addresses and folders come from the scan"
    ),
    "installs.model_not_in_scan": (
        "{name} is not among the missing models of scan {scan} ({names})"
    ),
    "installs.model_not_downloadable": "{name} cannot be downloaded: {reason}",
    # model downloads (core/installs/download_checks.py, download_transfer.py)
    "download.url_invalid": "the address given for {name} is not a download URL ({url})",
    "download.url_credentials": (
        "the address given for {name} carries a user name, password or token; the assistant "
        "downloads only from addresses without credentials"
    ),
    "download.not_https": (
        "the address given for {name} is not https ({url}); models are downloaded over https only"
    ),
    "download.host_not_allowed": (
        "{name} is on {host}, which is not a host models are downloaded from ({hosts}): "
        "download it in your browser and put it in ComfyUI's models folder"
    ),
    "download.name_invalid": (
        "'{name}' cannot be a model's file name: use a relative name such as "
        "SD1.5/model.safetensors, without '..', a leading '/', a drive, '\\' or control "
        "characters"
    ),
    "download.extension": "{name} is not a model file: the extensions downloaded are {extensions}",
    "download.unknown_folder": "'{folder}' is not a ComfyUI models folder (known: {known})",
    "download.hash_invalid": "the sha256 given for {name} is not 64 hexadecimal digits",
    "download.no_space": (
        "{name} needs {needed} but the disk holding the {folder} models folder has {free} "
        "free: free some space and download it again"
    ),
    "download.disk_full": (
        "The disk holding the {folder} models folder filled up while {name} was downloading: "
        "the part downloaded is kept; free some space and download it again to resume"
    ),
    "download.write_failed": "{name} cannot be written into the {folder} models folder: {reason}",
    "download.http_status": (
        "{host} answered HTTP {status} for {name}: the file may have moved or need a login on "
        "the site; check the address in the workflow"
    ),
    "download.web_page": (
        "{host} sent a web page instead of {name}: the model may need a login on the site; "
        "download it in your browser and put it in the {folder} models folder"
    ),
    "download.redirect_insecure": (
        "{host} redirected the download of {name} to {moved}, which is not https; it was not "
        "followed"
    ),
    "download.too_many_redirects": (
        "{host} redirected the download of {name} more than {limit} times; it was stopped"
    ),
    "download.unreachable": (
        "{host} could not be reached to download {name}: check the connection and try again"
    ),
    "download.interrupted": (
        "The download of {name} from {host} kept breaking off ({done} downloaded): the part is "
        "kept; download it again to resume"
    ),
    "download.hash_mismatch": (
        "{name} was downloaded, but its sha256 is {got}, not the {expected} expected: the file "
        "was deleted; the address may serve another version of the model"
    ),
}


# Parameter values the server writes in English that are words, not names: the panel shows
# them in the user's language too (`error.word.<key>`): the providers a profile cannot name.
WORDS: dict[str, str] = {
    "provider": "The provider",
    "provider_mid": "the provider",  # (in the middle of a sentence)
    "llama_cpp": "The llama.cpp server",
    "llama_cpp_mid": "the llama.cpp server",
}


def placeholders(template: str) -> set[str]:
    return {field for _, field, _, _ in Formatter().parse(template) if field}


def _shown(value: Param) -> str:
    """A parameter as the English text shows it (numbers grouped, as the panel shows them)."""
    if isinstance(value, bool) or value is None:
        return str(value).lower()
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.3f}".rstrip("0").rstrip(".")
    return value


@dataclass(frozen=True)
class Coded:
    """An error message by code: `str()` is its English text."""

    code: str
    params: Mapping[str, Param]

    def __str__(self) -> str:
        return ERRORS[self.code].format_map({k: _shown(v) for k, v in self.params.items()})

    def as_json(self) -> dict[str, Any]:
        return {"error": str(self), "code": self.code, "params": dict(self.params)}


def coded(code: str, **params: Param) -> Coded:
    """The error `code` with its parameters (each placeholder of its template, no other)."""
    wanted = placeholders(ERRORS[code])
    if wanted != params.keys():
        raise ValueError(f"error {code} takes {sorted(wanted)}, not {sorted(params)}")
    return Coded(code, params)


Message = str | Coded


def message_of(exc: BaseException) -> Message:
    """What an error says: its coded message where it has one, else its text."""
    message = getattr(exc, "coded", None)
    return message if isinstance(message, Coded) else str(exc)


def coded_of(message: Message) -> Coded | None:
    return message if isinstance(message, Coded) else None


def error_body(message: Message) -> dict[str, Any]:
    """An HTTP error's JSON body: `{"error": text}`, with `code` and `params` when coded."""
    return message.as_json() if isinstance(message, Coded) else {"error": message}


def stream_error_text(message: Message) -> str:
    """The `errorText` of a stream's `error` chunk: the same JSON object as an HTTP error's
    body when coded (the AI SDK hands it to the panel as `error.message`), else the text."""
    if isinstance(message, Coded):
        return json.dumps(message.as_json(), ensure_ascii=False)
    return message
