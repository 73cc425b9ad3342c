"""How columns share the room there is (the timeline's auto-fit, the detail pane's tables): plain
rules, tested alone."""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def fit_widths(natural: Mapping[int, int], floors: Mapping[int, int], room: int) -> dict[int, int]:
    """Widths for columns that want their ``natural`` widths in ``room`` pixels.

    They all get their natural width when it fits (or when there is no room at all). Otherwise
    they shrink by one factor, none below its floor; the room a floored column takes beyond its
    share comes out of the others (so that the whole fits whenever the floors do).
    """
    if room <= 0 or sum(natural.values()) <= room:
        return dict(natural)
    free = dict(natural)
    taken = 0
    while free:
        scale = max(0.0, (room - taken) / sum(free.values()))
        floored = [c for c, want in free.items() if want * scale < floors.get(c, 0)]
        if not floored:
            shrunk = {c: int(want * scale) for c, want in free.items()}
            return {c: shrunk.get(c, floors.get(c, 0)) for c in natural}
        for c in floored:
            taken += floors.get(c, 0)
            del free[c]
    return {c: floors.get(c, 0) for c in natural}


def pane_widths(wants: Sequence[tuple[int, int, int]], text: int, room: int) -> dict[int, int]:
    """Widths for a table in a pane ``room`` pixels wide (the detail pane's Findings and History
    tables), all of its columns in view: none pushed past the right edge.

    ``wants`` lists the columns most important first, each as ``(column, floor, natural)``: a
    column that carries identity (a severity, a code, an event number, a state) has its natural
    width as its floor, so it shows whole; long text has a floor of a few characters and elides.
    Every column gets its floor; the room left goes to them in that order, each up to its natural
    width; what is still left goes to column ``text`` (the message the rows are about), which is
    listed in ``wants`` too, its floor the least it reads with. When the floors alone do not fit,
    the long text columns give way below their floors in proportion, then (when that is not
    enough) every column but ``text`` does too, down to a pixel each: still all in view.
    """
    floors = {c: floor for c, floor, _natural in wants}
    if sum(floors.values()) > room:
        return _squeezed(wants, text, room)
    widths = dict(floors)
    left = room - sum(floors.values())
    for c, floor, natural in wants:
        more = min(left, max(0, natural - floor))
        widths[c] += more
        left -= more
    widths[text] += left
    return widths


def _squeezed(wants: Sequence[tuple[int, int, int]], text: int, room: int) -> dict[int, int]:
    """:func:`pane_widths` when the floors do not fit ``room``: ``text`` keeps its floor and the
    columns that carry identity theirs while the long text gives way (a pixel each at least); past
    that, every column but ``text`` gives way in proportion (:func:`fit_widths` without floors)."""
    floors = {c: floor for c, floor, _natural in wants}
    whole = {c: floor for c, floor, natural in wants if c != text and floor >= natural}
    long = {c: floor for c, floor, natural in wants if c != text and floor < natural}
    keep = min(floors[text], max(0, room - len(floors) + 1))  # the others keep a pixel each
    left = room - keep - sum(whole.values())
    if left >= len(long):
        widths = {**whole, **fit_widths(long, {}, max(1, left))} if long else dict(whole)
    else:
        widths = fit_widths({**whole, **long}, {}, max(1, room - keep))
    widths = {c: max(1, w) for c, w in widths.items()}  # a column of no width would be a hidden one
    return {**widths, text: max(1, room - sum(widths.values()))}
