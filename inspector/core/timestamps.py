"""Journal timestamps in the window: the one home of how a ``ts`` is shown, compared and typed.

A journal's ``ts`` is a naive local ISO-8601 string written for audit only, at whatever precision
the writer used (``2026-05-01T09:00:05`` beside ``2026-05-01T09:00:01.250000``), and it is not
monotonic: a clock moved back, or events written by two processes, give an earlier ``ts`` after a
later one. So the window never uses it to order rows (journal order is the order); it shows it at
one precision (:func:`format_ts`), filters rows by it (:func:`ts_key` against
:func:`parse_time_input` bounds) and finds the first row at or after a time in journal order.
"""

from __future__ import annotations

import re
from datetime import datetime

#: ``YYYY-MM-DD[T ]HH:MM[:SS[.fraction]]`` and whatever follows (an offset, ``Z``: kept as it is).
_ISO = re.compile(r"(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?)?(.*)", re.DOTALL)

#: Digits of the fraction a shown timestamp has (milliseconds).
SHOWN_FRACTION = 3

#: What the time boxes accept, in words (their placeholder and tooltip).
TIME_INPUT_HINT = "YYYY-MM-DD[ HH:MM[:SS[.fff]]]"


def format_ts(ts: str) -> str:
    """A timestamp as every part of the window shows it: the year, and milliseconds always
    (``2026-05-01T09:00:05`` → ``2026-05-01 09:00:05.000``). Anything that is not such a
    timestamp is shown as it is."""
    m = _ISO.fullmatch(ts)
    if m is None or m.group(2) is None:
        return ts
    date, hh, mm, ss, frac, rest = m.groups()
    fraction = (frac or "")[:SHOWN_FRACTION].ljust(SHOWN_FRACTION, "0")
    return f"{date} {hh}:{mm}:{ss or '00'}.{fraction}{rest}"


def ts_key(ts: str) -> str | None:
    """A key that orders timestamps by time whatever their precision
    (``YYYY-MM-DDTHH:MM:SS.ffffff``); ``None`` when ``ts`` is not a timestamp. An offset after
    the time is ignored: journal timestamps are naive local time."""
    m = _ISO.fullmatch(ts)
    if m is None:
        return None
    date, hh, mm, ss, frac, _rest = m.groups()
    return f"{date}T{hh or '00'}:{mm or '00'}:{ss or '00'}.{(frac or '')[:6].ljust(6, '0')}"


def parse_time_input(text: str, *, end: bool = False) -> str | None:
    """The :func:`ts_key` bound a person typed (``2026-05-01``, ``2026-05-01 09:00``, …).

    A bound covers the precision it was typed at: as a start it is the first instant of it, as an
    ``end`` the last (``to 2026-05-01`` keeps the whole day, ``to 09:00`` the whole minute).
    ``""`` gives ``None`` (no bound).

    Raises:
        ValueError: ``text`` is not a time the boxes accept (:data:`TIME_INPUT_HINT`).
    """
    text = text.strip()
    if not text:
        return None
    m = _ISO.fullmatch(text)
    if m is None or m.group(6).strip():
        raise ValueError(f"{text!r} is not a time ({TIME_INPUT_HINT})")
    date, hh, mm, ss, frac, _rest = m.groups()
    try:  # a date and time that exist (no month 13, no 25 o'clock)
        datetime.fromisoformat(f"{date}T{hh or '00'}:{mm or '00'}:{ss or '00'}")
    except ValueError:
        raise ValueError(f"{text!r} is not a time ({TIME_INPUT_HINT})") from None
    fill = "9" if end else "0"
    if hh is None:
        time = "23:59:59" if end else "00:00:00"
    elif ss is None:
        time = f"{hh}:{mm}:{'59' if end else '00'}"
    else:
        time = f"{hh}:{mm}:{ss}"
    fraction = (frac or "")[:6].ljust(6, fill)
    return f"{date}T{time}.{fraction}"
