"""A first start on a 900×600 screen (the window at 90 %: 810×540) keeps the timeline readable
(issue 27, seen after items 1-15): the memory server's panel took about 200 px and the sentinel
bar five wrapped lines, which left two rows. Now the panel's verdict comes first and whole, its
detail scrolls inside a bounded height, and the sentinel bar's text is one line cut in the middle,
whole on hover.

Runs in a child process on an offscreen screen of that size, as the dialog-fit tests do.
"""

from __future__ import annotations

import pytest

from inspector.widgets.server_start import SUBTITLE, TITLE
from inspector.widgets.timeline_bars import GUARDED_TITLE
from tests.inspector.widgets.test_dialogs_fit_the_screen import _probe

pytestmark = pytest.mark.gui

#: Rows a user sees at least (or every row, for a shorter journal).
USEFUL_ROWS = 8


@pytest.fixture(scope="module")
def shown(tmp_path_factory):
    return _probe(tmp_path_factory.mktemp("fit"), 900, 600, "_window_fit_probe")


def test_the_timeline_keeps_eight_rows_at_810_by_540(shown):
    names = {(c["source"], c["name"]) for c in shown}
    assert ("sample", "wedged-merge") in names and len({n for s, n in names if s == "cases"}) >= 5
    for c in shown:
        assert c["window"] == [810, 540], c["window"]
        assert c["full_rows"] >= min(USEFUL_ROWS, c["rows"]), (c["source"], c["name"], c["full_rows"], c["rows"])
        # the legend under it: its chips whole (a grid's column is as wide as its widest chip)
        assert not c["legend_cut"], (c["source"], c["name"], c["legend_cut"])


def test_the_servers_verdict_stays_first_and_whole_and_its_detail_is_reachable(shown):
    for c in shown:
        where = (c["source"], c["name"])
        # first: the server's panel above the sentinel bar, above the timeline
        assert c["panel_y"] < c["bar_y"] < c["timeline_y"], where
        # its verdict (the summary, the body's first paragraph) shows whole without scrolling
        assert c["summary"] and c["verdict_bottom"] <= c["body_viewport"], where
        assert c["summary"].split("\xa0")[-1].strip() in c["panel_text"], where
        # the rest is there: whole in the body, or behind its scroll bar
        assert c["body_text"] <= c["body_viewport"] + 1 or (c["scroll_shown"] and c["scroll_max"] > 0), where
        # the title: the server named first, the whole title on hover when cut
        assert c["title_shown"].startswith(TITLE[:10]), c["title_shown"]
        if c["title_shown"] != f"{TITLE} — {SUBTITLE}":
            assert f"{TITLE} — {SUBTITLE}" in c["title_tip"]


def test_the_sentinel_bar_is_cut_in_the_middle_with_the_whole_text_on_hover(shown):
    cut = 0
    for c in shown:
        where = (c["source"], c["name"])
        assert c["bar_title"] == f"{GUARDED_TITLE}:", where
        assert c["bar_label_right"] < c["bar_width"] and c["bar_label_height"] >= c["bar_label_wants"], where
        if c["bar_shown"] != c["bar_text"]:
            cut += 1
            head, sep, tail = c["bar_shown"].partition("…")
            assert sep and head and tail, c["bar_shown"]  # both ends kept
            assert c["bar_text"].startswith(head) and c["bar_text"].endswith(tail), where
            assert c["bar_text"] in c["bar_tip"], where
    assert cut  # a 330 px column cuts some: the test saw the narrow case
