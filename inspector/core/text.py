"""Text for terminals and labels, in one place: escaping what came from a folder, and counts."""

from __future__ import annotations


def one_line(text: str) -> str:
    """Control characters and newlines escaped, so hostile content cannot drive the terminal."""
    if text.isprintable():  # the common case, checked in C (a space is printable)
        return text
    return "".join(c if c.isprintable() or c == " " else repr(c)[1:-1] for c in text)


def count(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and the noun, singular for one (``1 defect``, ``3 defects``, ``1,000 entries``)."""
    word = noun if n == 1 else (plural or noun + "s")
    return f"{n:,} {word}"


def size_text(n: int) -> str:
    """A size in bytes for people: ``512 bytes``, ``4.5 KiB``, ``1,234.5 MiB``, ``2.0 GiB``."""
    size = float(n)
    for unit in ("bytes", "KiB", "MiB"):
        if size < 1024:
            return count(n, "byte") if unit == "bytes" else f"{size:,.1f} {unit}"
        size /= 1024
    return f"{size:,.1f} GiB"
