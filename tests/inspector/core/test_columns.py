"""The timeline's auto-fit rule: columns shrink together, none below its floor, and the whole fits
whenever the floors do (the overview ruler once left State a few pixels out of view at 900 px)."""

from __future__ import annotations

import pytest

from inspector.core.columns import fit_widths, pane_widths

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


# -- the detail pane's tables (issue 27 items 5 and 8) --------------------------------------------------

#: (column, floor, natural), most important first: 0 carries identity (floor = natural), 1 is the
#: text the rows are about, 2 and 3 long text that elides.
WANTS = [(0, 100, 100), (1, 80, 400), (2, 30, 150), (3, 30, 200)]


@pytest.mark.parametrize(
    ("room", "expected"),
    [
        (240, {0: 100, 1: 80, 2: 30, 3: 30}),  # the floors exactly
        (500, {0: 100, 1: 340, 2: 30, 3: 30}),  # the text's claim comes before the long columns'
        (900, {0: 100, 1: 450, 2: 150, 3: 200}),  # every claim met: the text takes the rest
    ],
)
def test_pane_widths_fill_the_pane_identity_whole_and_the_text_takes_the_rest(room, expected):
    widths = pane_widths(WANTS, 1, room)
    assert widths == expected and sum(widths.values()) == room  # all in view, none past the edge


def test_pane_widths_give_the_room_in_order_of_importance():
    widths = pane_widths(WANTS, 1, 300)
    assert widths == {0: 100, 1: 140, 2: 30, 3: 30}
    widths = pane_widths([(0, 100, 100), (2, 30, 150), (1, 80, 400), (3, 30, 200)], 1, 300)
    assert widths == {0: 100, 2: 90, 1: 80, 3: 30}


@pytest.mark.parametrize("room", [235, 200, 190, 120, 40])
def test_below_the_floors_the_long_text_gives_way_first_and_all_stays_in_view(room):
    widths = pane_widths(WANTS, 1, room)
    assert sum(widths.values()) == room and all(w >= 1 for w in widths.values())
    if room >= 100 + 80 + 2:
        assert widths[0] == 100 and 80 <= widths[1] <= 82  # identity whole, the text at its floor
        assert widths[2] < 30 and widths[3] < 30
    else:
        assert widths[0] < 100
