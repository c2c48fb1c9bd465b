"""A chat turn end to end: the request body checked, the plan, the context, the model's stream with
its tool steps, the answer saved as it streams, and delegation. It is handed the parts of a turn
(`turn_parts.py`) by the service above it.

May import: base, tokens, stream, knowledge, tools, store, memory, files, provider, context,
summary.
"""

from .attachment_fit import attach_file
from .chat_plan import response_message_id
from .chat_request import ChatRequest, check_workflow, parse_chat_request, workflow_key
from .chat_turn import ChatTurn, StreamEnd
from .thread_delta import with_answer_replaced, with_stored_history
from .turn_lock import TURN_WAIT_SECONDS, turn_holds
from .turn_parts import TurnOptions, TurnParts

__all__ = [
    "TURN_WAIT_SECONDS",
    "ChatRequest",
    "ChatTurn",
    "StreamEnd",
    "TurnOptions",
    "TurnParts",
    "attach_file",
    "check_workflow",
    "parse_chat_request",
    "response_message_id",
    "turn_holds",
    "with_answer_replaced",
    "with_stored_history",
    "workflow_key",
]
