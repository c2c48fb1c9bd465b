"""Looking back: searching the conversation (by words, meaning and time), the searchConversation
tool, and the passages recalled for a new message.

May import: base, tokens, tools, store.
"""

from .recall_tool import look_back
from .turn_recall import recall_for_turn

__all__ = ["look_back", "recall_for_turn"]
