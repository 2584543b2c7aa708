"""The launch's steps that need no box: the capped streams, their incremental parse, and the
exit code / signal mapping. The attack suites cover them end to end."""

from __future__ import annotations

import os

import pytest

from evaluation.sandbox import launch

pytestmark = pytest.mark.nodb


@pytest.fixture
def streams():
    pipes = launch.Pipes.open()
    for fd in pipes.box_ends:
        os.close(fd)
    found = launch.Streams(pipes)
    yield pipes, found
    found.close()
    os.close(pipes.in_w)


def test_results_are_parsed_as_their_lines_complete(streams):
    pipes, found = streams
    assert found.take(pipes.res_r, b'{"e":"ready"}\n{"e":"te') == [{"e": "ready"}]
    assert found.take(pipes.res_r, b'st","i":0}\nnot json\n') == [{"e": "test", "i": 0}]
    assert found.take(pipes.res_r, b'{"e":"done"}') == []
    assert found.finish() == [{"e": "ready"}, {"e": "test", "i": 0}, {"e": "done"}]


def test_each_stream_keeps_its_head_and_only_output_streams_have_a_cap(streams):
    pipes, found = streams
    found.take(pipes.out_r, b"x" * (launch.STREAM_CAP + 1))
    found.take(pipes.info_r, b"y" * (launch.STREAM_CAP + 1))
    found.take(pipes.res_r, b"z" * launch.RESULT_CAP)
    assert len(found.kept[pipes.out_r]) == launch.STREAM_KEEP and found.over_cap(pipes.out_r)
    assert len(found.kept[pipes.info_r]) == launch.STREAM_KEEP and not found.over_cap(pipes.info_r)
    assert len(found.kept[pipes.res_r]) == launch.RESULT_CAP and not found.over_cap(pipes.res_r)
    found.take(pipes.res_r, b"\n")
    assert found.over_cap(pipes.res_r) and found.received[pipes.res_r] == launch.RESULT_CAP + 1


def test_the_child_pid_comes_from_bwraps_info_pipe(streams):
    pipes, found = streams
    assert found.child_pid() is None
    found.take(pipes.info_r, b'{\n    "child-pid": 4242\n}\n')
    assert found.child_pid() == 4242


@pytest.mark.parametrize(
    ("returncode", "via_bwrap", "expected"),
    [
        (0, True, (0, None)),
        (-9, False, (None, 9)),
        (137, True, (None, 9)),
        (137, False, (137, None)),
        (99, True, (99, None)),
    ],
)
def test_exit_code_or_signal(returncode, via_bwrap, expected):
    assert launch.exit_and_signal(returncode, via_bwrap=via_bwrap) == expected
