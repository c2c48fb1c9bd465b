"""The note a tool call past a step's limit is answered with: written by the stream's translator
(`stream_translate.MAX_TOOL_CALLS_PER_STEP`), recognized by the context engine when such a
round must be made smaller to fit (`context/round_fold.py`)."""

OVER_LIMIT = (
    "Not run: a step may make at most {limit} tool calls and this was call {position}. Make the "
    "calls still needed in the next step."
)
