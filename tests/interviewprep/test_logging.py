"""The JSON log line: one object per record, its timestamp right across seconds."""

import json
import logging

import pytest

from interviewprep.logging import JsonFormatter, RequestIdFilter, request_id_var

pytestmark = pytest.mark.nodb


def _line(formatter: JsonFormatter, second: int, msecs: int = 0, **extra) -> dict:
    record = logging.makeLogRecord({"name": "interviewprep.request", "msg": "request", "levelname": "INFO", **extra})
    record.created, record.msecs = second + msecs / 1000, float(msecs)
    RequestIdFilter().filter(record)
    return json.loads(formatter.format(record))


def test_a_line_carries_the_request_id_and_the_extra_fields():
    token = request_id_var.set("req-42")
    try:
        line = _line(JsonFormatter(), 1764625000, 250, status=200, path="/healthz", odd=object())
    finally:
        request_id_var.reset(token)
    assert line["request_id"] == "req-42"
    assert (line["level"], line["logger"], line["msg"]) == ("info", "interviewprep.request", "request")
    assert line["status"] == 200 and line["path"] == "/healthz"
    assert line["odd"].startswith("<object object")


def test_timestamps_stay_right_across_seconds_and_back():
    formatter = JsonFormatter()
    stamps = [_line(formatter, *at)["ts"] for at in ((1764625000, 999), (1764625001, 1), (1764624999, 500))]
    assert stamps == ["2025-12-01T21:36:40.999Z", "2025-12-01T21:36:41.001Z", "2025-12-01T21:36:39.500Z"]
