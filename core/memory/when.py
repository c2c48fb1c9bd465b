"""Time expressions, as a model writes them when it looks back ("yesterday", "last week", "in
May", "2025-05-14", "2025-05-01..2025-05-14"), read deterministically, offline, in the local
time of this machine, relative to `now`: each is a range [start, end) of epoch seconds.

Accepted (case does not matter; `FORMS` is what the tool's description lists):
- today, yesterday; this/last week (weeks start on Monday), this/last month, this/last year;
- a weekday ("tuesday", "on tuesday", "last tuesday"): the latest such day before today;
- N days/weeks/months ago (that day, week or month); past/last N days/weeks/months (from then
  until now);
- a month ("may", "in may", "may 2025"): the latest May up to now, or that year's;
- a day ("14 may", "may 14", "may 14 2025", "2025-05-14"), a month "2025-05", a year "2025";
- a range of two of these: "A..B", "A to B", "from A to B", "between A and B" (from the start
  of A to the end of B); "since A", "after A", "before A".
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta

FORMS = (
    '"today", "yesterday", "last week", "this month", "in May", "tuesday", "3 days ago", '
    '"past 2 weeks", "2025-05-14", "14 May", "2025-05-01..2025-05-14", "since May"'
)
MONTHS = (
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december",
)  # fmt: skip
DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_UNITS = {"day": "day", "days": "day", "week": "week", "weeks": "week", "month": "month"}
_UNITS |= {"months": "month", "year": "year", "years": "year"}
_RANGE = re.compile(r"^(?:from |between )?(.+?)(?:\s*\.\.\s*|\s+to\s+|\s+and\s+|\s+-\s+)(.+)$")
_ISO = re.compile(r"^(\d{4})(?:-(\d{1,2})(?:-(\d{1,2}))?)?$")
_AGO = re.compile(r"^(\d{1,3}|an?|one) (\w+) ago$")
_PAST = re.compile(r"^(?:the )?(?:past|last) (\d{1,3}) (\w+)$")
_NUMBERS = {"a": 1, "an": 1, "one": 1}


class WhenError(ValueError):
    """A time expression not understood; the message lists the accepted forms."""


Range = tuple[datetime, datetime]  # [start, end), naive local times


def time_range(text: str, now: datetime) -> tuple[float, float]:
    """[start, end) in epoch seconds for `text`, relative to `now` (naive: local time)."""
    start, end = _range(" ".join(text.lower().replace(",", " ").split()), now)
    return start.timestamp(), end.timestamp()


def _range(text: str, now: datetime) -> Range:
    for word, pick in (("since ", 0), ("after ", 1)):
        if text.startswith(word):
            start = _span(text[len(word) :], now)[pick]
            return start, max(now, start)
    if text.startswith("before "):
        return datetime(1970, 1, 2), _span(text[7:], now)[0]
    found = _RANGE.match(text)
    if found and not _PAST.match(text):
        try:
            first, last = _span(found[1], now), _span(found[2], now)
        except WhenError:
            pass  # ("may 14 2025" has no range in it; a failing part is read whole below)
        else:
            return first[0], max(last[1], first[0])
    return _span(text, now)


def _day(day: date) -> Range:
    start = datetime(day.year, day.month, day.day)
    return start, start + timedelta(days=1)


def _month(year: int, month: int) -> Range:
    following = (year + 1, 1) if month == 12 else (year, month + 1)
    return datetime(year, month, 1), datetime(*following, 1)


def _week(monday: date) -> Range:
    return _day(monday)[0], _day(monday + timedelta(days=7))[0]


def _span(text: str, now: datetime) -> Range:
    """One expression (no range in it)."""
    text = text.strip().removeprefix("on ").removeprefix("in ").removeprefix("the ")
    today = now.date()
    monday = today - timedelta(days=today.weekday())
    fixed = {
        "today": lambda: _day(today),
        "yesterday": lambda: _day(today - timedelta(days=1)),
        "this week": lambda: _week(monday),
        "last week": lambda: _week(monday - timedelta(days=7)),
        "this month": lambda: _month(today.year, today.month),
        "last month": lambda: _month(*_months_back(today, 1)),
        "this year": lambda: (datetime(today.year, 1, 1), datetime(today.year + 1, 1, 1)),
        "last year": lambda: (datetime(today.year - 1, 1, 1), datetime(today.year, 1, 1)),
    }
    if text in fixed:
        return fixed[text]()
    if (found := _AGO.match(text)) and found[2] in _UNITS:
        return _ago(_count(found[1]), _UNITS[found[2]], now)
    if (found := _PAST.match(text)) and found[2] in _UNITS:
        return _ago(_count(found[1]), _UNITS[found[2]], now)[0], now
    weekday = _weekday(text.removeprefix("last "))
    if weekday is not None:
        back = (today.weekday() - weekday - 1) % 7 + 1  # 1..7 days: before today
        return _day(today - timedelta(days=back))
    return _date(text, today)


def _count(word: str) -> int:
    return _NUMBERS[word] if word in _NUMBERS else int(word)


def _months_back(today: date, n: int) -> tuple[int, int]:
    index = today.year * 12 + today.month - 1 - n
    return index // 12, index % 12 + 1


def _ago(n: int, unit: str, now: datetime) -> Range:
    today = now.date()
    if unit == "day":
        return _day(today - timedelta(days=n))
    if unit == "week":
        return _week(today - timedelta(days=today.weekday() + 7 * n))
    if unit == "month":
        return _month(*_months_back(today, n))
    return datetime(today.year - n, 1, 1), datetime(today.year - n + 1, 1, 1)


def _weekday(word: str) -> int | None:
    """0 for "monday" or "mon" (any start of a day's name of 3 letters or more)."""
    if len(word) < 3:
        return None
    return next((i for i, name in enumerate(DAYS) if name.startswith(word)), None)


def _month_of(word: str) -> int | None:
    """5 for "may"; "sep", "sept" and "september" alike (a word that starts a month's name)."""
    if len(word) < 3:
        return None
    return next((i + 1 for i, name in enumerate(MONTHS) if name.startswith(word)), None)


def _date(text: str, today: date) -> Range:
    try:
        found = _ISO.match(text)
        if found:
            year, month, day = (int(g) if g else None for g in found.groups())
            assert year is not None
            if month is None:
                return datetime(year, 1, 1), datetime(year + 1, 1, 1)
            return _day(date(year, month, day)) if day else _month(year, month)
        return _named_date(text.replace(".", "").split(), today)
    except WhenError:
        raise
    except ValueError:  # (a day that no month has: "31 feb", "2025-13-01")
        raise WhenError(f"'{text}' is not a date. Use forms like {FORMS}.") from None


def _named_date(words: list[str], today: date) -> Range:
    """ "may", "may 2025", "14 may", "may 14", "14th may 2025"."""
    months = [m for m in map(_month_of, words) if m]
    month = months[0] if len(months) == 1 else None
    numbers = [int(w.rstrip("stndrh")) for w in words if w.rstrip("stndrh").isdigit()]
    others = [w for w in words if _month_of(w) is None and not w.rstrip("stndrh").isdigit()]
    if month is None or others or len(numbers) > 2:
        raise WhenError(f"'{' '.join(words)}' is not a time I can read. Use forms like {FORMS}.")
    years = [n for n in numbers if n >= 1000]
    days = [n for n in numbers if n < 1000]
    if len(years) > 1 or len(days) > 1:
        raise WhenError(f"'{' '.join(words)}' names two years or two days. Use forms like {FORMS}.")
    year = years[0] if years else today.year
    if not years and (month, days[0] if days else 1) > (today.month, today.day):
        year -= 1  # "may" in March means last May: looking back
    return _day(date(year, month, days[0])) if days else _month(year, month)
