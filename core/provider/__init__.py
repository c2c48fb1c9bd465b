"""The model's server: the OpenAI-compatible client and its settings, what kind of server it is and
what it can do (probes, profiles, llama.cpp slots, exact counts), the window's budget and the
answer's limit.

May import: base, tokens, stream.
"""

from .budget import (
    Budget,
    ContextBudgetError,
    Window,
    compute_budget,
    reported_window,
)
from .output_limit import OutputMeter, cut_note
from .provider import Provider, ProviderError, describe_error, is_provider_error
from .provider_check import check_provider
from .provider_config import (
    ProviderSettings,
    apply_update,
    environment_problems,
    origin,
    settings_of,
    stored_bound,
    validate_update,
)
from .provider_probes import Capabilities, ProviderFacts, model_key, provider_facts
from .provider_profiles import is_cache_full, is_context_overflow, window_from_error
from .server_counts import SOURCE, calibration_due, server_parts
from .shared_cache import ChatLease, background, others_done
from .slots import SlotChoice, choose_slot

__all__ = [
    "SOURCE",
    "Budget",
    "Capabilities",
    "ChatLease",
    "ContextBudgetError",
    "OutputMeter",
    "Provider",
    "ProviderError",
    "ProviderFacts",
    "ProviderSettings",
    "SlotChoice",
    "Window",
    "apply_update",
    "background",
    "calibration_due",
    "check_provider",
    "choose_slot",
    "compute_budget",
    "cut_note",
    "describe_error",
    "environment_problems",
    "is_cache_full",
    "is_context_overflow",
    "is_provider_error",
    "model_key",
    "origin",
    "others_done",
    "provider_facts",
    "reported_window",
    "server_parts",
    "settings_of",
    "stored_bound",
    "validate_update",
    "window_from_error",
]
