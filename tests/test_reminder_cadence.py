"""The reminder block a user message is first sent with (sent_turns.due_note): sent when it
says something new, not with every message (~30 tokens each, resent with every request)."""

from __future__ import annotations

import datetime

from comfyui_assistant.core.store.sent_turns import (
    REMINDER_EVERY_TURNS,
    SentTurn,
    due_note,
    now_text,
    turn_note,
)

TZ = datetime.timezone.utc
AT = datetime.datetime(2026, 11, 26, 10, 5, tzinfo=TZ)


def sent_at(when: datetime.datetime, reminders: list[str] | None = None) -> SentTurn:
    return SentTurn(turn_note(reminders or [], now_text(when)))


def test_the_first_message_of_a_thread_gets_the_block():
    assert due_note([], AT, []) == turn_note([], now_text(AT))
    assert due_note([], AT, [None, None]) != ""  # (sent before turns were kept)


def test_the_same_reminders_within_the_hour_are_not_sent_again():
    earlier = [sent_at(AT), SentTurn(""), SentTurn("")]
    assert due_note([], AT + datetime.timedelta(minutes=59), earlier) == ""
    # however many messages went without one: the time is all it says
    assert (
        due_note([], AT + datetime.timedelta(minutes=5), [sent_at(AT)] + [SentTurn("")] * 40) == ""
    )


def test_an_hour_later_another_day_or_other_reminders_send_it_again():
    earlier = [sent_at(AT), SentTurn("")]
    later = AT + datetime.timedelta(hours=1)
    assert due_note([], later, earlier) == turn_note([], now_text(later))
    midnight = datetime.datetime(2026, 11, 26, 23, 50, tzinfo=TZ)
    next_day = midnight + datetime.timedelta(minutes=15)
    assert due_note([], next_day, [sent_at(midnight)]) != ""
    assert "Answer in French." in due_note(["Answer in French."], AT, earlier)


def test_the_users_own_reminders_come_back_every_few_messages():
    rules = ["Answer in French."]
    earlier = [sent_at(AT, rules)] + [SentTurn("")] * (REMINDER_EVERY_TURNS - 2)
    assert due_note(rules, AT, earlier) == ""
    assert "Answer in French." in due_note(rules, AT, [*earlier, SentTurn("")])
