"""Recall per turn through /api/assistant/chat: a new user message brings back the passages of
earlier messages no longer in the request (under the summary) that match it, within its share
of the budget, attached to it as sent and resent byte for byte; nothing when nothing was left
out."""

from __future__ import annotations

from comfyui_assistant.core.context.context_inputs import ContextSettings
from comfyui_assistant.core.memory.turn_recall import HEAD, RECALL_SHARE

from .conftest import start_app
from .helpers import assistant_message, chat_body, context_report, summary_text, user
from .scripted_provider import Completion, text_reply
from .test_context_e2e import env_for, long_thread, summaries_done

FACT = "For the lighthouse painting I want a teal sky at dusk, with a thin fog."


def summarized_thread(provider, fact: str, question: str, *replies: str) -> list[dict]:
    """A long thread whose third message (`fact`) goes under the summary the scripted model
    writes once `question` no longer fits, then `replies` to answer with."""
    thread = long_thread()
    thread[2] = user(fact, "u2")
    thread.append(user(question, "u_last"))
    provider.enqueue(*map(text_reply, replies))
    provider.summaries.append(Completion(summary_text("warm images")))
    return thread


def contents(request: dict) -> list[str]:
    return [str(m.get("content")) for m in request["messages"]]


async def test_a_new_message_brings_back_what_it_needs_from_the_summarized_history(
    provider, tmp_path, sdk
):
    app = await start_app(tmp_path, env_for(provider, LLM_CONTEXT_WINDOW="8192"))
    thread = summarized_thread(
        provider,
        FACT,
        "Which sky did I want for the lighthouse painting?",
        "Teal, at dusk.",
        "Done.",
    )
    try:
        _, body = await app.chat(chat_body(*thread))
        sdk.check(body)
        await summaries_done(app)
        report = context_report(body)
        assert report["counts"]["summarized"] > 2  # u2 is under the summary...
        sent = provider.requests[-1]["messages"][-1]["content"]
        assert HEAD in sent and FACT in sent  # ...and recalled for the question
        assert sent.index("<system-reminder>") < sent.index(HEAD)  # after the reminder
        recalled = report["recalled"]
        assert recalled["passages"][0]["messageId"] == "u2"
        assert 0 < recalled["tokens"] <= RECALL_SHARE * report["budget"]
        assert ContextSettings().recall_share == RECALL_SHARE  # (the default)
        assert report["tokens"]["recalled"] == recalled["tokens"]
        assert not any(FACT in c for c in contents(provider.requests[-1])[:-1])

        # the next turn resends that message exactly as it was first sent
        thread += [assistant_message("Teal, at dusk.", "a_last"), user("Make it wider.", "u9")]
        _, body = await app.chat(chat_body(*thread))
        assert sent in contents(provider.requests[-1])
        assert context_report(body)["tokens"]["recalled"] >= recalled["tokens"]
    finally:
        await app.close()


async def test_nothing_is_recalled_while_the_whole_thread_is_sent(provider, tmp_path):
    app = await start_app(tmp_path, env_for(provider, LLM_CONTEXT_WINDOW="8192"))
    thread = [user(FACT, "u0"), assistant_message("Noted.", "a0")]
    thread.append(user("Which sky did I want for the lighthouse painting?", "u1"))
    provider.enqueue(text_reply("Teal."))
    try:
        _, body = await app.chat(chat_body(*thread))
        report = context_report(body)
        assert report["recalled"] is None and report["tokens"]["recalled"] == 0
        assert HEAD not in provider.requests[-1]["messages"][-1]["content"]
    finally:
        await app.close()


async def test_one_common_word_brings_nothing_back_and_a_passage_comes_back_once(
    provider, tmp_path, monkeypatch
):
    # by words only: "change" is in every stretch of graph work; recalled every turn, it would
    # fill a tenth of the budget with noise. And what was recalled for a message still in the
    # request is not attached again to the next one.
    monkeypatch.setenv("COMFY_ASSISTANT_NO_EMBEDDINGS", "1")
    app = await start_app(tmp_path, env_for(provider, LLM_CONTEXT_WINDOW="8192"))
    # (it shares the fact's words, but does not look back: nothing is recalled for it)
    thread = summarized_thread(
        provider,
        FACT,
        "Paint a lighthouse with a teal sky at dusk, one more change.",
        "Done.",
        "Teal.",
        "Teal again.",
    )
    question = "Which sky did I want for the lighthouse painting?"
    try:
        _, body = await app.chat(chat_body(*thread))
        await summaries_done(app)
        assert context_report(body)["counts"]["summarized"] > 2
        assert context_report(body)["recalled"] is None
        thread += [assistant_message("Done.", "a_last"), user(question, "u_q1")]
        _, body = await app.chat(chat_body(*thread))
        await summaries_done(app)
        assert [p["messageId"] for p in context_report(body)["recalled"]["passages"]] == ["u2"]
        thread += [assistant_message("Teal.", "a_q1"), user(question, "u_q2")]
        _, body = await app.chat(chat_body(*thread))
        assert context_report(body)["recalled"] is None  # u_q1 still carries it
        assert sum(FACT in c for c in contents(provider.requests[-1])) == 1
    finally:
        await app.close()


async def test_a_passage_that_shares_no_word_is_not_attached_by_meaning_alone(provider, tmp_path):
    # measured (bench/memory_prose.py): the best passages by meaning were seldom what a
    # message asked about, and resent with it they took the verbatim history's room
    from comfyui_assistant.core.store import embeddings

    assert embeddings.available(), "the semantic extra is installed by scripts/setup"
    app = await start_app(tmp_path, env_for(provider, LLM_CONTEXT_WINDOW="8192"))
    thread = summarized_thread(
        provider,
        "My daughter started painting again, watercolours mostly.",
        "What hobby did my kid pick back up?",
        "Painting.",
    )
    try:
        _, body = await app.chat(chat_body(*thread))
        assert context_report(body)["counts"]["summarized"] > 2
        assert context_report(body)["recalled"] is None
    finally:
        await app.close()


async def test_recall_per_turn_can_be_switched_off(provider, tmp_path):
    env = env_for(provider, LLM_CONTEXT_WINDOW="8192", LLM_RECALL_SHARE="0")
    app = await start_app(tmp_path, env)
    thread = summarized_thread(
        provider, FACT, "Which sky did I want for the lighthouse painting?", "Teal, at dusk."
    )
    try:
        _, body = await app.chat(chat_body(*thread))
        assert context_report(body)["counts"]["summarized"] > 2
        assert context_report(body)["recalled"] is None
        assert FACT not in provider.requests[-1]["messages"][-1]["content"]
    finally:
        await app.close()
