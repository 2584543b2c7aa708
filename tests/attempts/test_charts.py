"""The SVG line chart shared by the progress page and the staff dashboard."""

from __future__ import annotations

from attempts.charts import ChartLine, line_chart


def test_a_missing_value_breaks_the_line_into_segments_and_values_scale_to_the_top():
    chart = line_chart(
        [ChartLine("depth", [(0.0, 10.0, "a"), (0.5, None, "b"), (0.75, 5.0, "c"), (1.0, 0.0, "d")])],
        y_max=10,
        grid=[(0, "0"), (10, "10")],
        ticks=[(0.0, "start"), (1.0, "end")],
    )

    line = chart["lines"][0]
    # x runs from 44 to 624, y from 12 (the top, 10) to 208 (0).
    assert line["segments"] == ["44.0,12.0", "479.0,110.0 624.0,208.0"]
    assert [point.label for point in line["points"]] == ["a", "c", "d"]
    assert [grid["y"] for grid in chart["grid"]] == [208.0, 12.0]
    assert [tick["x"] for tick in chart["ticks"]] == [44.0, 624.0]


def test_a_value_above_the_top_is_drawn_at_the_top():
    chart = line_chart([ChartLine("x", [(0.0, 250.0, "high")])], y_max=100, grid=[], ticks=[])
    assert chart["lines"][0]["segments"] == ["44.0,12.0"]
