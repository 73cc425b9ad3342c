"""The timeline's auto-fit rule: columns shrink together, none below its floor, and the whole fits
whenever the floors do (the overview ruler once left State a few pixels out of view at 900 px)."""

from __future__ import annotations

import pytest

from inspector.core.columns import fit_widths

NATURAL = {2: 200, 3: 160, 5: 180}
FLOORS = {2: 80, 3: 80, 5: 134}


def test_natural_widths_when_they_fit_or_when_there_is_no_room():
    assert fit_widths(NATURAL, FLOORS, 600) == NATURAL
    assert fit_widths(NATURAL, FLOORS, 0) == NATURAL


@pytest.mark.parametrize("room", [354, 400, 320, 294])
def test_a_floored_column_takes_its_floor_from_the_others(room):
    widths = fit_widths(NATURAL, FLOORS, room)
    assert sum(widths.values()) <= room
    assert all(widths[c] >= FLOORS[c] for c in NATURAL)
    assert widths[2] >= widths[3]  # the others keep their proportions


def test_below_the_floors_every_column_keeps_its_floor():
    assert fit_widths(NATURAL, FLOORS, 100) == FLOORS
