"""The JSON log line: one object per record, with the ids bound, its timestamp right across seconds."""

import json
import logging

import pytest

from interviewprep.logging import JsonFormatter, LogContextFilter, current_request_id, log_context, request_id_accept

pytestmark = pytest.mark.nodb


def _line(formatter: JsonFormatter, second: int, msecs: int = 0, **extra) -> dict:
    record = logging.makeLogRecord({"name": "interviewprep.request", "msg": "request", "levelname": "INFO", **extra})
    record.created, record.msecs = second + msecs / 1000, float(msecs)
    LogContextFilter().filter(record)
    return json.loads(formatter.format(record))


def test_a_line_carries_the_request_id_and_the_extra_fields():
    with log_context(request_id="req-42"):
        line = _line(JsonFormatter(), 1764625000, 250, status=200, path="/healthz", odd=object())
    assert line["request_id"] == "req-42"
    assert (line["level"], line["logger"], line["msg"]) == ("info", "interviewprep.request", "request")
    assert line["status"] == 200 and line["path"] == "/healthz"
    assert line["odd"].startswith("<object object")


def test_timestamps_stay_right_across_seconds_and_back():
    formatter = JsonFormatter()
    stamps = [_line(formatter, *at)["ts"] for at in ((1764625000, 999), (1764625001, 1), (1764624999, 500))]
    assert stamps == ["2025-12-01T21:36:40.999Z", "2025-12-01T21:36:41.001Z", "2025-12-01T21:36:39.500Z"]


def test_bound_ids_nest_and_unbind_and_a_line_of_its_own_wins():
    formatter = JsonFormatter()
    with log_context(request_id="req-7", job_id=3):
        with log_context(attempt_id=11, job_id=4):
            inner = _line(formatter, 1764625000, job_id=5)
        outer = _line(formatter, 1764625000)
        assert current_request_id() == "req-7"
    after = _line(formatter, 1764625000)
    assert (inner["request_id"], inner["attempt_id"], inner["job_id"]) == ("req-7", 11, 5)
    assert (outer["job_id"], "attempt_id" in outer) == (3, False)
    assert (after["request_id"], "job_id" in after, current_request_id()) == ("-", False, "")


@pytest.mark.parametrize("sent", ["abc-123", "A.b_C-9", "x" * 64])
def test_a_sane_request_id_is_kept(sent):
    assert request_id_accept(sent) == sent


@pytest.mark.parametrize("sent", [None, "", "x" * 65, "has space", "new\nline", "ok\n", "é", "a/b", '"quoted"'])
def test_any_other_request_id_is_replaced_by_a_new_one(sent):
    made = request_id_accept(sent)
    assert made != sent and len(made) == 32 and made.isalnum()
