"""How columns share the room there is (the timeline's auto-fit): a plain rule, tested alone."""

from __future__ import annotations

from collections.abc import Mapping


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
