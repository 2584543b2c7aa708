"""Coordinates for the server-rendered SVG charts (the progress page, the staff dashboard).

The templates only draw what is computed here (polylines, circles, rects), so the page needs no
chart library and no script, and every number drawn is also in words: in the table beside the
progress charts, and in each dashboard point's title and the latest values below its chart.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from attempts.selectors.progress import ProgressDay, ProgressGroup
from evaluation.dashboard import Dashboard

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


@dataclass(frozen=True)
class ChartLine:
    """One series of a line chart: (x share of the width 0-1, y or None for a gap, label)."""

    name: str
    values: Sequence[tuple[float, float | None, str]]


def line_chart(
    lines: Sequence[ChartLine],
    *,
    y_max: float,
    grid: Sequence[tuple[float, str]],
    ticks: Sequence[tuple[float, str]],
) -> dict[str, Any]:
    """Polylines over 0..y_max, x by share of the width; a None value breaks its line into
    segments, so a gap in the data shows as a gap. `grid` and `ticks` are (value, label) for the
    y grid lines and the x labels."""
    plot_w = LINE_WIDTH - LINE_LEFT - LINE_RIGHT
    plot_h = LINE_HEIGHT - LINE_TOP - LINE_BOTTOM
    top = y_max or 1

    def x_of(share: float) -> float:
        return _round(LINE_LEFT + share * plot_w)

    def y_of(value: float) -> float:
        return _round(LINE_TOP + (top - min(value, top)) / top * plot_h)

    drawn = []
    for index, line in enumerate(lines):
        points = [Point(x_of(share), y_of(value), label) for share, value, label in line.values if value is not None]
        segments: list[list[Point]] = [[]]
        for share, value, label in line.values:
            if value is None:
                if segments[-1]:
                    segments.append([])
                continue
            segments[-1].append(Point(x_of(share), y_of(value), label))
        drawn.append(
            {
                "name": line.name,
                "index": index,
                "points": points,
                "segments": [" ".join(f"{p.x},{p.y}" for p in segment) for segment in segments if segment],
            }
        )
    return {
        "width": LINE_WIDTH,
        "height": LINE_HEIGHT,
        "left": LINE_LEFT,
        "right": LINE_WIDTH - LINE_RIGHT,
        "axis_y": LINE_HEIGHT - LINE_BOTTOM,
        "label_y": LINE_HEIGHT - LINE_BOTTOM + 20,
        "lines": drawn,
        "polyline": drawn[0]["segments"][0] if drawn and drawn[0]["segments"] else "",
        "points": drawn[0]["points"] if drawn else [],
        "grid": [{"y": y_of(value), "label": label} for value, label in grid],
        "ticks": [{"x": x_of(share), "label": label} for share, label in ticks],
    }


def score_line_chart(days: Sequence[ProgressDay]) -> dict[str, Any]:
    """The mean score of each day, as a polyline over 0-100 %, x by date (a gap of days shows as
    a gap), with grid lines every 25 %."""
    span = (days[-1].day - days[0].day).days if days else 0

    def share(day: ProgressDay) -> float:
        # A single day sits in the middle rather than on the axis.
        return (day.day - days[0].day).days / span if span else 0.5

    values = [
        (share(day), day.average_score, f"{day.day:%d %b %Y}: {day.average_score:g} % over {day.answers}")
        for day in days
    ]
    ticks = []
    if days:
        ticks.append((share(days[0]), f"{days[0].day:%d %b}"))
        if span:
            ticks.append((share(days[-1]), f"{days[-1].day:%d %b}"))
    return line_chart(
        [ChartLine("mean score", values)],
        y_max=100,
        grid=[(percent, f"{percent} %") for percent in (0, 25, 50, 75, 100)],
        ticks=ticks,
    )


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


def _nice_ceiling(value: float) -> float:
    """The smallest 1, 2 or 5 times a power of ten at or above `value` (at least 1)."""
    if value <= 1:
        return 1
    power = 10 ** math.floor(math.log10(value))
    return next(step * power for step in (1, 2, 5, 10) if step * power >= value)


def _format(value: float) -> str:
    return f"{value:g}"


QUARTERS = (0, 15, 30, 45, 60)


def _time_chart(
    dashboard: Dashboard,
    slug: str,
    title: str,
    unit: str,
    series: dict[str, Sequence[tuple[datetime, float | None]]],
    *,
    scale: float = 1.0,
    y_max: float | None = None,
    midpoint: bool = False,
    summed: bool = False,
) -> dict[str, Any]:
    """One chart of the dashboard's hour: x by time (with `midpoint`, a per-minute bucket drawn at
    its middle), y from 0; `summed` for counts, whose hour's total means something."""
    span = (dashboard.now - dashboard.since).total_seconds()
    offset = dashboard.bucket_seconds / 2 if midpoint else 0

    def share(at: datetime) -> float:
        return min(1.0, max(0.0, ((at - dashboard.since).total_seconds() + offset) / span))

    lines = [
        ChartLine(
            name,
            [
                (
                    share(at),
                    None if value is None else value * scale,
                    f"{name} at {at:%H:%M}: " + ("—" if value is None else f"{_format(round(value * scale, 3))}{unit}"),
                )
                for at, value in points
            ],
        )
        for name, points in series.items()
    ]
    highest = max((value for line in lines for _, value, _ in line.values if value is not None), default=0)
    top = y_max or _nice_ceiling(highest)
    chart = line_chart(
        lines,
        y_max=top,
        grid=[(value, f"{_format(value)}{unit}") for value in (0, top / 2, top)],
        ticks=[(minutes * 60 / span, f"{dashboard.since + timedelta(minutes=minutes):%H:%M}") for minutes in QUARTERS],
    )
    latest = {
        line.name: next((value for _, value, _ in reversed(line.values) if value is not None), None) for line in lines
    }
    total = sum(value for line in lines for _, value, _ in line.values if value is not None)
    return {
        **chart,
        "slug": slug,
        "title": title,
        "unit": unit,
        "latest": [
            {"name": name, "value": "—" if value is None else f"{_format(round(value, 3))}{unit}"}
            for name, value in latest.items()
        ],
        "total": _format(round(total, 3)) if summed else None,
    }


def dashboard_charts(dashboard: Dashboard) -> list[dict[str, Any]]:
    """The staff dashboard's charts, in the order the page shows them."""
    return [
        _time_chart(
            dashboard, "queue-depth", "Messages waiting in the broker, by queue", "", dashboard.queue_depth_history
        ),
        _time_chart(
            dashboard,
            "oldest-waiting",
            "Age of the oldest waiting job, by kind",
            " s",
            dashboard.oldest_waiting_history,
        ),
        _time_chart(
            dashboard,
            "throughput",
            "Jobs finished per minute",
            "",
            {"finished": dashboard.throughput},
            midpoint=True,
            summed=True,
        ),
        _time_chart(
            dashboard,
            "latency",
            "Job latency (created to succeeded), per minute",
            " s",
            dashboard.latency,
            midpoint=True,
        ),
        _time_chart(
            dashboard,
            "failures",
            "Retries and dead letters per minute",
            "",
            {"retries": dashboard.retries, "dead letters": dashboard.dead_letters},
            midpoint=True,
            summed=True,
        ),
        _time_chart(
            dashboard,
            "cache-hit-ratio",
            "Cache hit ratio between samples",
            " %",
            {"hit ratio": dashboard.cache_hit_ratio},
            scale=100,
            y_max=100,
        ),
        _time_chart(
            dashboard,
            "lock-contention",
            "Runs deferred by a held lock, per minute",
            "",
            {"lock contended": dashboard.lock_contention},
            midpoint=True,
            summed=True,
        ),
    ]
