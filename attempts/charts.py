"""Coordinates for the progress page's server-rendered SVG charts.

The templates only draw what is computed here (polylines, circles, rects), so the page needs no
chart library and no script, and every number drawn is also in the table beside the chart.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from attempts.selectors.progress import ProgressDay, ProgressGroup

LINE_WIDTH, LINE_HEIGHT = 640, 240
# Room for the axis labels: left for the percentages, below for the dates.
LINE_LEFT, LINE_RIGHT, LINE_TOP, LINE_BOTTOM = 44, 16, 12, 32
BAR_WIDTH, BAR_ROW, BAR_LABEL = 640, 30, 150


@dataclass(frozen=True)
class Point:
    x: float
    y: float
    label: str


def _round(value: float) -> float:
    return round(value, 1)


def score_line_chart(days: Sequence[ProgressDay]) -> dict[str, Any]:
    """The mean score of each day, as a polyline over 0-100 %, x by date (a gap of days shows as
    a gap), with grid lines every 25 %."""
    plot_w = LINE_WIDTH - LINE_LEFT - LINE_RIGHT
    plot_h = LINE_HEIGHT - LINE_TOP - LINE_BOTTOM
    span = (days[-1].day - days[0].day).days if days else 0

    def x_of(day: ProgressDay) -> float:
        # A single day sits in the middle rather than on the axis.
        share = (day.day - days[0].day).days / span if span else 0.5
        return _round(LINE_LEFT + share * plot_w)

    def y_of(percent: float) -> float:
        return _round(LINE_TOP + (100 - percent) / 100 * plot_h)

    points = [
        Point(x_of(day), y_of(day.average_score), f"{day.day:%d %b %Y}: {day.average_score:g} % over {day.answers}")
        for day in days
    ]
    grid = [{"y": y_of(percent), "label": f"{percent} %"} for percent in (0, 25, 50, 75, 100)]
    ticks = []
    if days:
        ticks.append({"x": x_of(days[0]), "label": f"{days[0].day:%d %b}"})
        if span:
            ticks.append({"x": x_of(days[-1]), "label": f"{days[-1].day:%d %b}"})
    return {
        "width": LINE_WIDTH,
        "height": LINE_HEIGHT,
        "left": LINE_LEFT,
        "right": LINE_WIDTH - LINE_RIGHT,
        "axis_y": LINE_HEIGHT - LINE_BOTTOM,
        "label_y": LINE_HEIGHT - LINE_BOTTOM + 20,
        "polyline": " ".join(f"{p.x},{p.y}" for p in points),
        "points": points,
        "grid": grid,
        "ticks": ticks,
    }


def solved_bar_chart(groups: Sequence[ProgressGroup]) -> dict[str, Any]:
    """One row per group: a track as long as its questions, the practised ones over it, the
    solved ones over those, all on one scale (the largest group)."""
    most = max((group.questions for group in groups), default=0) or 1
    plot_w = BAR_WIDTH - BAR_LABEL - 60

    def width(count: int) -> float:
        return _round(count / most * plot_w)

    rows = [
        {
            "label": group.label,
            "y": index * BAR_ROW + 4,
            "text_y": index * BAR_ROW + 19,
            "questions": width(group.questions),
            "practised": width(group.practised),
            "solved": width(group.solved),
            "count_x": _round(BAR_LABEL + width(group.questions) + 6),
            "words": f"{group.solved} of {group.questions}",
        }
        for index, group in enumerate(groups)
    ]
    return {"width": BAR_WIDTH, "height": max(1, len(rows)) * BAR_ROW, "label_width": BAR_LABEL, "rows": rows}
