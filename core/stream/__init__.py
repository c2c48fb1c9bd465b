"""The answer's stream to the panel: the AI SDK UI message stream (SSE), the translation of the
provider's chunks into it, think tags, redaction of secrets, tool calls a model wrote as text or
nearly right (read as meant), and the answer assembled from the parts.

May import: base.
"""

from . import ui_stream
from .call_repair import schemas_of
from .redact import install_log_filter, redact, remember_secret
from .sse import ClientGone, PumpOptions, StreamFailed, pump
from .stream_translate import StepTranslator, Usage, new_id
from .think_tags import visible_text
from .ui_assembler import MessageAssembler

__all__ = [
    "ClientGone",
    "MessageAssembler",
    "PumpOptions",
    "StepTranslator",
    "StreamFailed",
    "Usage",
    "install_log_filter",
    "new_id",
    "pump",
    "redact",
    "remember_secret",
    "schemas_of",
    "ui_stream",
    "visible_text",
]
