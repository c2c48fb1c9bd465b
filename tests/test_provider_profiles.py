"""A provider is one profile: how it is recognized lives in its ProviderProfile (core/provider/
provider_profiles.py), not in code that branches on its kind."""

from comfyui_assistant.core.provider.provider_profiles import (
    PROFILES,
    ProviderKind,
    kind_of,
    retries_for,
)


def test_each_kind_is_recognized_by_what_its_profile_says():
    for profile in PROFILES.values():
        if profile.port is not None:
            assert kind_of(f"http://10.0.0.5:{profile.port}/v1") is profile.kind
    assert kind_of("https://api.openai.com/v1") is ProviderKind.OPENAI
    assert kind_of("https://openrouter.ai/api/v1") is ProviderKind.OPENROUTER
    assert kind_of("https://api.groq.com/openai/v1") is ProviderKind.GROQ
    assert kind_of("http://my-ollama:9000/v1") is ProviderKind.OLLAMA
    # a host that names a kind wins over another kind's usual port
    assert kind_of("http://ollama.lan:8080/v1") is ProviderKind.OLLAMA
    assert kind_of("https://api.openai.com:1234/v1") is ProviderKind.OPENAI
    assert kind_of("http://10.0.0.5:9999/v1") is ProviderKind.GENERIC
    assert kind_of("https://openai.com.example.org/v1") is ProviderKind.GENERIC


def test_what_a_server_is_asked_and_how_often_a_call_is_retried_come_from_its_profile():
    asked = {kind: profile.capabilities for kind, profile in PROFILES.items()}
    assert asked[ProviderKind.LLAMA_CPP] == ("props",)
    assert asked[ProviderKind.OLLAMA] == ("show",)
    assert asked[ProviderKind.GENERIC] == ("props", "show")
    assert not asked[ProviderKind.OPENAI] and not asked[ProviderKind.LM_STUDIO]
    assert retries_for("http://localhost:11434/v1") == 0  # a local server: it would fail again
    assert retries_for("https://api.openai.com/v1") == 2
    assert retries_for("http://10.0.0.5:9999/v1") == 0  # unknown, on this network
    assert retries_for("https://llm.example.com/v1") == 2  # unknown, hosted
