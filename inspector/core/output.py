"""What the command line prints, in one place: its JSON, its terminal progress meter and its exit codes.

Every ``memory-inspector`` command writes its ``--json`` document with :func:`dumps` (or, for a
document too big to hold, :func:`iter_json`), shows a long read with a :class:`Meter` and maps its
outcome to an :class:`ExitCode`. Format writers keep their own exact encoders, by name: the view
encoder (:mod:`journal.codec`), the bundle members that keep the memory server's bytes
(:func:`inspector.core.bundle.redact.dumps_json`) and the export formats
(:func:`inspector.core.export.dumps_value`).
"""

from __future__ import annotations

import enum
import json
import os
import sys
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TextIO

import orjson

from inspector.core.text import one_line
from journal.diagnosis.values import is_shown


class ExitCode(enum.IntEnum):
    """The exit codes of every command (each command's epilog says what its outcomes map to)."""

    #: Done: the output was written, nothing is wrong (``check``: only info findings; ``diff``:
    #: identical).
    OK = 0
    #: Done, and something needs a look: problems found, a difference, a refusal, a cancelled or
    #: stopped replay, a journal that cannot give the history.
    PROBLEMS = 1
    #: Bad input: PATH unreadable, no such character / entry / event, bad arguments.
    BAD_INPUT = 2
    #: Ctrl+C.
    INTERRUPTED = 130
    #: The reader of stdout went away (``check ... | head``), as a shell tool ends.
    BROKEN_PIPE = 141

    @classmethod
    def of(cls, ok: bool) -> ExitCode:
        """:attr:`OK` when ``ok``, else :attr:`PROBLEMS`."""
        return cls.OK if ok else cls.PROBLEMS


def error(prog: str, message: str, code: ExitCode = ExitCode.BAD_INPUT) -> ExitCode:
    """Print ``<prog>: error: <message>`` (one escaped line) on stderr; returns ``code``."""
    print(f"{prog}: error: {one_line(message)}", file=sys.stderr)
    return code


def interrupted(prog: str, detail: str = "") -> ExitCode:
    """Print ``<prog>: interrupted`` (and ``; <detail>``) on a line of its own; returns 130."""
    print(f"\n{prog}: interrupted" + (f"; {detail}" if detail else ""), file=sys.stderr)
    return ExitCode.INTERRUPTED


# -- values for people -----------------------------------------------------------------------------


def value_text(value: Any) -> str:
    """One stored value for a terminal, by the one privacy rule of what text the CLI shows
    (:func:`journal.diagnosis.values.is_shown`): a number, a boolean or null as JSON; any other
    value (text, a list, an object) only as its kind and size (``‹text, 42 chars›``), so no text of
    the folder reaches a terminal or a ticket pasted from one."""
    if is_shown(value):
        return json.dumps(value)
    if isinstance(value, str):
        return f"‹text, {len(value):,} char{'s' if len(value) != 1 else ''}›"
    if isinstance(value, list):
        return f"‹list, {len(value):,} item{'s' if len(value) != 1 else ''}›"
    if isinstance(value, dict):
        return f"‹object, {len(value):,} key{'s' if len(value) != 1 else ''}›"
    return f"‹{type(value).__name__}›"


class FilteredLines:
    """A text stream that writes each line through ``line_filter`` to ``out`` (``--redact`` on a
    report written as it is made); :meth:`close` writes an unterminated last line. A line ``out``'s
    encoding cannot take is written backslash-escaped."""

    def __init__(self, out: TextIO, line_filter: Callable[[str], str]) -> None:
        self.out = out
        self.line_filter = line_filter
        self._pending = ""

    def write(self, text: str) -> int:
        *lines, self._pending = (self._pending + text).split("\n")
        if lines:
            self._emit("".join(self.line_filter(line) + "\n" for line in lines))
        return len(text)

    def flush(self) -> None:
        self.out.flush()

    def close(self) -> None:
        if self._pending:
            self._emit(self.line_filter(self._pending))
            self._pending = ""
        self.flush()

    def _emit(self, text: str) -> None:
        try:
            self.out.write(text)
        except UnicodeEncodeError:
            self.out.write(text.encode("ascii", "backslashreplace").decode("ascii"))


# -- JSON ------------------------------------------------------------------------------------------


def dumps(doc: Any) -> bytes:
    """``doc`` as the CLI's JSON: UTF-8, two-space indent, newline-terminated.

    A string that is not valid Unicode (a lone surrogate from an escaped journal line) or an
    integer beyond 64 bits, which orjson refuses, makes the whole document ASCII-escaped
    (``json.dumps(..., ensure_ascii=True)``): still valid JSON, and it round-trips.
    """
    try:
        return orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n"
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        return (json.dumps(doc, indent=2, ensure_ascii=True) + "\n").encode("ascii")


#: How many items of a :class:`Streamed` list :func:`iter_json` encodes at a time.
ITEMS_PER_PIECE = 10_000


class Streamed:
    """A list inside a document given to :func:`iter_json`, encoded a piece at a time.

    The items must be valid for orjson (valid Unicode, integers within 64 bits): the caller checks
    that before (it can, cheaply, on the few strings that can be odd), since the items are read
    only once.
    """

    def __init__(self, items: Iterable[Any], *, per_piece: int | None = None) -> None:
        self.items = iter(items)
        #: How many items are encoded at a time (default: :data:`ITEMS_PER_PIECE`).
        self.per_piece = per_piece


def iter_json(doc: Any, *, whole: Callable[[], Any]) -> Iterator[bytes]:
    """The bytes :func:`dumps` writes for a document with :class:`Streamed` lists in it, in pieces,
    so that a list of a million items is never held whole, nor its million dicts.

    The rest of the document is encoded first, with a unique placeholder string for each
    :class:`Streamed` list; the lists are spliced in where the placeholders are. When the rest
    cannot be encoded by orjson, ``whole()`` (the same document with plain lists) is written by
    :func:`dumps` instead.
    """
    streamed: list[Streamed] = []
    marker = f"streamed-{uuid.uuid4().hex}-"

    def placeholder(value: Any) -> str:
        if not isinstance(value, Streamed):
            raise TypeError(f"not JSON: {type(value).__name__}")
        streamed.append(value)
        return f"{marker}{len(streamed) - 1}"

    try:
        head = orjson.dumps(doc, default=placeholder, option=orjson.OPT_INDENT_2)
    except TypeError:
        yield dumps(whole())
        return
    at = 0
    for i, listing in enumerate(streamed):
        mark = orjson.dumps(f"{marker}{i}")
        j = head.index(mark, at)
        line_start = head.rfind(b"\n", 0, j) + 1
        indent = len(head[line_start:j]) - len(head[line_start:j].lstrip(b" "))
        yield head[at:j]
        yield from _list_pieces(listing.items, indent, listing.per_piece or ITEMS_PER_PIECE)
        at = j + len(mark)
    yield head[at:] + b"\n"


def _list_pieces(items: Iterator[Any], indent: int, per_piece: int) -> Iterator[bytes]:
    """A list as :func:`dumps` lays it out under a key indented by ``indent`` spaces, in pieces."""
    newline = b"\n" + b" " * indent
    first = True
    while True:
        piece = [item for _, item in zip(range(per_piece), items, strict=False)]
        if not piece:
            break
        data = orjson.dumps(piece, option=orjson.OPT_INDENT_2)
        # data is b"[\n  {...},\n  {...}\n]": keep the items, moved to the key's depth.
        yield (b"[" if first else b",") + data[1:-2].replace(b"\n", newline)
        first = False
    yield b"[]" if first else newline + b"]"


def write(out: TextIO, data: bytes | Iterable[bytes]) -> None:
    """Write encoded output (one ``bytes`` or pieces) to ``out``: its binary buffer when it has one
    (flushed around it, so text written before stays before), else decoded."""
    pieces = [data] if isinstance(data, bytes) else data
    buffer = getattr(out, "buffer", None)
    if buffer is not None:
        out.flush()
        for piece in pieces:
            buffer.write(piece)
        buffer.flush()
    else:
        for piece in pieces:
            out.write(piece.decode("utf-8"))


def write_json(out: TextIO, doc: Any) -> None:
    """``doc`` written to ``out`` as :func:`dumps` encodes it."""
    write(out, dumps(doc))


# -- the terminal meter ----------------------------------------------------------------------------


def is_terminal(stream: TextIO) -> bool:
    """Whether ``stream`` is a terminal (``False`` for a stream without ``isatty`` or a closed one)."""
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


#: How long a read runs before the meter shows, and how often the meter changes (seconds).
METER_AFTER = 0.5
METER_EVERY = 0.2


class Meter:
    """A ``progress(done, total)`` callback for a terminal: one line, rewritten in place, such as
    ``memory-inspector check: reading journals 45% · 180 of 400 MiB``. Quick work shows nothing.
    Nothing it does can stop the work (a write error is ignored).

    Args:
        stream: where the line goes (a terminal).
        clock: seconds, for the delays above.
        columns: the terminal's width (default: asked of ``stream``, else 80).
        label: what comes before the figures.
        unit: ``"bytes"`` (the figures are MiB) or a plural noun counted as is (``3 of 10 events``).
    """

    def __init__(
        self,
        stream: TextIO,
        clock: Callable[[], float] = time.monotonic,
        columns: int | None = None,
        label: str = "memory-inspector",
        unit: str = "bytes",
    ) -> None:
        self.stream = stream
        self.label = label
        self.unit = unit
        self.clock = clock
        self.start = clock()
        self.shown_at: float | None = None
        self.width = 0
        if columns is None:
            try:
                columns = os.get_terminal_size(stream.fileno()).columns
            except (AttributeError, OSError, ValueError):
                columns = 80
        # A line that wraps cannot be rewritten with "\r": stay within the terminal's width.
        self.columns = max(20, columns)

    def __call__(self, done: int, total: int) -> None:
        now = self.clock()
        if total <= 0 or now - self.start < METER_AFTER:
            return
        if self.shown_at is not None and now - self.shown_at < METER_EVERY and done < total:
            return
        self.shown_at = now
        if self.unit == "bytes":
            figures = f"{done / 2**20:,.0f} of {total / 2**20:,.0f} MiB"
        else:
            figures = f"{done:,} of {total:,} {self.unit}"
        text = f"{self.label} {done * 100 // total}% · {figures}"[: self.columns - 1]
        self.width = max(self.width, len(text))
        self._write("\r" + text.ljust(self.width))

    def clear(self) -> None:
        """Blank the line, if anything was shown (and a ``^C`` the terminal echoed after it)."""
        if self.width:
            self._write("\r" + " " * min(self.width + 2, self.columns - 1) + "\r")
            self.width = 0

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):
            pass


def meter(label: str, stream: TextIO | None = None, *, unit: str = "bytes") -> Meter | None:
    """A :class:`Meter` on ``stream`` (default: stderr) when it is a terminal, else ``None``."""
    stream = sys.stderr if stream is None else stream
    return Meter(stream, label=label, unit=unit) if is_terminal(stream) else None


def clear(m: Meter | None) -> None:
    """Blank ``m``'s line (nothing when there is no meter)."""
    if m is not None:
        m.clear()


__all__ = [
    "ExitCode",
    "FilteredLines",
    "Meter",
    "Streamed",
    "clear",
    "dumps",
    "error",
    "interrupted",
    "is_terminal",
    "iter_json",
    "meter",
    "value_text",
    "write",
    "write_json",
]
