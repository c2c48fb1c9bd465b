"""The shapes that cross a boundary, as TypedDicts: the AI SDK's UI messages the panel sends,
the OpenAI chat messages a provider gets, and the context report the panel's gauge shows
(its TypeScript type is generated from `ContextReport` by scripts/gen_panel_types.py)."""

from __future__ import annotations

from typing import Any, Literal, TypedDict

# --- the AI SDK's UI messages (what the panel sends and the thread stores) ---------------------


class UIPart(TypedDict, total=False):
    """One part of a UI message. `type` says which: "text", "reasoning", "file", "step-start",
    "tool-<name>" or "dynamic-tool" (with the tool fields), "data-<name>" (with `data`)."""

    type: str
    text: str
    state: str  # a tool part: input-streaming, input-available, output-available, output-error
    toolCallId: str
    toolName: str  # a dynamic-tool part's tool
    input: Any
    output: Any
    errorText: str
    preliminary: bool
    url: str  # a file part's data: or http(s): URL
    mediaType: str
    filename: str
    data: Any  # a data part's payload
    id: str
    shown: dict[str, str]  # what a tool's result shows a model that sees (never stored: SHOWN)
    approval: dict[str, Any]  # the AI SDK's tool approval: {id, approved?, reason?}


Role = Literal["user", "assistant", "system"]


class _UIMessageFields(TypedDict):
    id: str
    role: Role
    parts: list[UIPart]


class UIMessage(_UIMessageFields, total=False):
    metadata: Any


# --- OpenAI chat messages (what the provider gets) -------------------------------------------

Content = str | list[dict[str, Any]] | None


class FunctionCall(TypedDict):
    name: str
    arguments: str  # JSON text


class ToolCall(TypedDict):
    id: str
    type: Literal["function"]
    function: FunctionCall


class _OpenAIRole(TypedDict):
    role: Literal["system", "user", "assistant", "tool"]


class OpenAIMessage(_OpenAIRole, total=False):
    content: Content  # a text, or parts (text and image_url)
    tool_calls: list[ToolCall]  # an assistant message's calls
    tool_call_id: str  # a tool message: the call it answers
    name: str


def with_content(message: OpenAIMessage, content: Content) -> OpenAIMessage:
    """The message with other content (the original unchanged)."""
    out = message.copy()
    out["content"] = content
    return out


# --- the context report ------------------------------------------------------------------------


class ReportWindow(TypedDict):
    tokens: int
    source: str  # where the window size came from: settings, model table, provider, ...
    detail: str | None


class ReportTokens(TypedDict):
    """What each section of the request takes, as the provider counts (corrected)."""

    system: int
    userContext: int
    summary: int
    history: int
    toolResults: int
    tools: int
    reminders: int
    recalled: int  # passages of earlier messages attached to user messages (turn_recall)
    documents: int  # the project's documents, whole or retrieved passages
    reserve: int


class ReportCounts(TypedDict):
    kept: int  # blocks sent
    digested: int  # kept tool rounds sent as digests
    summarized: int  # UI messages under the running summary
    dropped: int  # blocks left out by the priority window
    cut: int  # tool rounds with a result cut


class ReportSummary(TypedDict):
    covers: int  # UI messages it covers
    fallback: bool  # the deterministic digest stood in for the model's summary


class ReportFactors(TypedDict):
    """The learned correction per component: provider tokens per token we count."""

    system: float
    tools: float  # 0 when the server drops the tool definitions
    messages: float


class ReportDocument(TypedDict):
    citationId: str  # "doc-<id>" whole, "doc-<id>-p<n>" a passage
    title: str
    tokens: int  # its contents, exact


class ReportDocuments(TypedDict):
    """What was sent of the thread's project documents."""

    project: str
    mode: Literal["whole", "retrieved"]
    documents: int  # in the project
    passages: int  # sent (retrieved mode)
    tokens: int  # the block, as the provider counts
    sent: list[ReportDocument]


class RecalledPassage(TypedDict):
    messageId: str  # the earlier message it is from
    role: str
    at: float  # when that message was said (epoch seconds)
    tokens: int


class ReportRecalled(TypedDict):
    """The passages of earlier messages, no longer in the request, recalled for the latest
    user message and sent with it (core/memory/turn_recall.py)."""

    tokens: int
    passages: list[RecalledPassage]


class ContextReport(TypedDict):
    """What the context engine did for one request (a `data-context` part of the answer)."""

    model: str
    window: ReportWindow
    budget: int  # tokens for system prompt and messages
    tokens: ReportTokens
    counts: ReportCounts
    summary: ReportSummary | None
    counter: str  # "tiktoken:<encoding>" or "estimate"
    correction: float  # estimated / exact: the learned correction of the whole request
    factors: ReportFactors  # ... per component
    documents: ReportDocuments | None  # the project's documents sent, if the thread has any
    recalled: ReportRecalled | None  # recalled for the latest user message, if anything
    calibration: str | None  # how the server's own tokenizer measured them, when it did
    reported: int | None  # the provider's prompt tokens for this request, once known
    cachedTokens: int | None  # of those, what the provider served from its prefix cache
    estimated: int  # our count, corrected
    exact: int  # our exact count, before the correction
    limits: list[str]  # what the engine left out or shortened, in words
    # what the answer's tool calls were read as meant (repaired or recovered from text: issue
    # 40); counted in the answer's last report, 0 in the reports before its calls settle
    repairs: int


# --- a delegated task (the `delegate` tool: core/chat/delegation.py) ----------------------------
# Its TypeScript types are generated for the panel's card (scripts/gen_panel_types.py).


class DelegateUsage(TypedDict):
    steps: int  # model calls
    tokens: int  # prompt + completion tokens of all of them (estimated if not reported)
    seconds: float


class DelegateTool(TypedDict):
    name: str
    args: str  # its key arguments, in a few words
    state: Literal["running", "done", "failed"]


class DelegateProgress(TypedDict):
    """A delegated task still running (an interim output of the `delegate` call)."""

    status: Literal["running"]
    task: str
    steps: int
    tools: list[DelegateTool]
    usage: DelegateUsage


class _DelegateResultFields(TypedDict):
    ok: bool
    answer: str
    facts: list[str]
    sources: list[str]  # the lookups it made, one line each
    usage: DelegateUsage


class DelegateResult(_DelegateResultFields, total=False):
    """What a delegated task returns: all that enters the parent's context."""

    error: str  # why it failed (ok: false), and what to do instead
    format: Literal["json", "text"]  # its answer came as the JSON asked for, or as plain text
    documents: list[CitedDocument]  # what its answer cites, renumbered in the parent's thread


class DelegationTrace(TypedDict):
    """A delegated task in full, as stored: its ids, its messages and its result."""

    id: str  # the child's id
    threadId: str
    messageId: str  # the parent's answer that called it
    toolCallId: str  # the parent's `delegate` call
    task: str
    context: str
    status: Literal["done", "failed", "cancelled"]
    system: str  # the child's system prompt
    messages: list[UIMessage]  # the task, then the child's answer with its tool calls
    result: DelegateResult | None
    budget: DelegateUsage  # its limits
    createdAt: float


# --- documents to cite (core/tools/documents.py) ------------------------------------------------
# Their TypeScript types are generated for the panel's citation chips.


class CitedDocument(TypedDict):
    """A document a tool returned; the model cites it as `[citation_id]`, numbered thread-wide."""

    citation_id: int
    title: str
    contents: str
    # `source`: "node docs" (`node_type`), "url" (`url`) or "project" (`path`)
    metadata: dict[str, Any]


class DocumentsResult(TypedDict):
    """The result of a tool that returns documents, with the note to cite them."""

    documents: list[CitedDocument]
    cite: str


# --- where the server sends requests (core/base/egress.py) --------------------------------------
# Their TypeScript types are generated for Settings' "Where your requests go".

EgressKind = Literal["provider", "comfyui", "manager", "registry", "modelSizes", "downloads"]
EgressUnused = Literal["offline", "noComfyUI", "badSetting"]  # why an entry is not used now


class EgressEntry(TypedDict):
    """One destination: its kind (the panel words it), the origins it goes to (none: this
    ComfyUI's own address), whether the offline switch turns it off, and why it is not used
    now (null: it is)."""

    kind: EgressKind
    hosts: list[str]
    offlineOff: bool
    unused: EgressUnused | None


class EgressStatement(TypedDict):
    """Every destination the server may send requests to, and whether the offline switch is on."""

    offline: bool
    offlineEnv: str
    entries: list[EgressEntry]
