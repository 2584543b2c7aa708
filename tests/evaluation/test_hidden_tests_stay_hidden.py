"""Nothing a submission gets back holds a hidden test's arguments or expected value, whatever
the answer prints, raises, returns or forges, in hidden tests or in shown ones."""

from __future__ import annotations

import json
import uuid

import pytest

from evaluation.evaluators.base import EvaluationOutcome
from evaluation.evaluators.code import CodeRunnerEvaluator
from tests.evaluation.sandbox_helpers import request_for

pytestmark = pytest.mark.nodb

HIDDEN_ROW = {"name", "visible", "outcome", "time_ms"}


def secret_spec() -> tuple[dict, list[str]]:
    """One shown test, then hidden ones whose argument and expected value are unique tokens
    (hex only, so an answer can make them a class name too)."""
    secrets: list[str] = []
    tests = [{"name": "shown", "args": ["shown"], "expected": "shown", "visible": True}]
    for n in range(3):
        arg, expected = f"ARG{uuid.uuid4().hex}", f"EXP{uuid.uuid4().hex}"
        secrets += [arg, expected]
        tests.append({"name": f"hidden_{n}", "args": [arg], "expected": expected})
    return {"function": "f", "tests": tests, "time_limit_s": 2}, secrets


def assert_nothing_hidden_leaks(outcome: EvaluationOutcome, secrets: list[str]) -> None:
    for serialized in (
        outcome.feedback + json.dumps(outcome.details),
        outcome.feedback + json.dumps(outcome.details, ensure_ascii=False),
        repr(outcome),
    ):
        leaked = [s for s in secrets if s in serialized or s[3:] in serialized]
        assert leaked == [], serialized[:2000]
    # Nor anything derived from them: hidden rows hold nothing the answer could shape.
    hidden = [row for row in outcome.details["tests"] if not row["visible"]]
    assert hidden and all(set(row) == HIDDEN_ROW for row in hidden), hidden
    assert outcome.details["load_error"] is None


LEAKS_FROM_THE_HIDDEN_TEST = {
    "print": "def f(x):\n    print('leak', x)\n    return x\n",
    "value_error": "def f(x):\n    raise ValueError(repr(x))\n",
    "named_exception": "def f(x):\n    raise type('Leak' + x, (Exception,), {})(x)\n",
    "unprintable_return": "def f(x):\n    return type('T' + x, (), {})()\n",
    "huge_return": "def f(x):\n    return x * 100000\n",
    "stderr": "import sys\ndef f(x):\n    sys.stderr.write(x)\n    sys.__stderr__.write(x)\n    return 0\n",
    "raw_fds": "import os\ndef f(x):\n    os.write(1, x.encode())\n    os.write(2, x.encode())\n    return 0\n",
    "exit_with_it": "import sys\ndef f(x):\n    sys.exit(x)\n",
    "flood_then_name": "import os\ndef f(x):\n    while True:\n        os.write(1, x.encode() * 1000)\n",
}


@pytest.mark.parametrize("answer", LEAKS_FROM_THE_HIDDEN_TEST.values(), ids=LEAKS_FROM_THE_HIDDEN_TEST.keys())
def test_what_a_hidden_test_prints_raises_or_returns_stays_hidden(answer):
    spec, secrets = secret_spec()
    outcome = CodeRunnerEvaluator().evaluate(request_for(answer, spec))
    assert outcome.score < 100
    assert_nothing_hidden_leaks(outcome, secrets)


# A shown test's output is shown in full, so the hidden arguments must not be in the box yet:
# these hunt the harness's memory for them and show what they find.
HUNT = """
import gc, re, sys

def hunt():
    found = []
    token = re.compile(r"ARG[0-9a-f]{32}")
    for obj in gc.get_objects():
        items = obj.values() if isinstance(obj, dict) else obj if isinstance(obj, (list, tuple)) else ()
        for item in items:
            if isinstance(item, (bytes, str)):
                found += token.findall(item.decode("latin-1") if isinstance(item, bytes) else item)
    frame = sys._getframe()
    while frame is not None:
        found += token.findall(repr(frame.f_locals)[:1000000])
        frame = frame.f_back
    return found
"""

LEAKS_FROM_A_SHOWN_TEST = {
    "return_what_is_found": HUNT + "def f(x):\n    return hunt() if x == 'shown' else x\n",
    "print_and_raise_it": HUNT + "def f(x):\n    found = hunt()\n    print(found)\n    raise ValueError(repr(found))\n",
    "at_the_top_level": HUNT + "if hunt():\n    raise ValueError(repr(hunt()))\ndef f(x):\n    return x\n",
}


@pytest.mark.parametrize("answer", LEAKS_FROM_A_SHOWN_TEST.values(), ids=LEAKS_FROM_A_SHOWN_TEST.keys())
def test_a_shown_test_finds_no_hidden_argument_in_the_box(answer):
    spec, secrets = secret_spec()
    outcome = CodeRunnerEvaluator().evaluate(request_for(answer, spec))
    assert_nothing_hidden_leaks(outcome, secrets)


def test_forging_the_end_of_the_shown_tests_still_shows_nothing_hidden():
    # The answer claims, on the result channel, that the shown test is done, so the parent
    # sends the hidden arguments; it reads them from stdin, then shows them every way it can.
    answer = """
import os, sys
RESULTS = int(sys.argv[-1])

def say(line):
    os.write(RESULTS, line.encode() + b"\\n")

def f(x):
    if x != "shown":
        return x
    say('{"e":"test","i":0,"s":"ok","v":"shown","t":0,"o":"forged"}')
    stolen = os.read(0, 1 << 20).decode("latin-1")
    text = repr(stolen).replace('"', "'")
    say('{"e":"load_error","kind":"exception","msg":"' + text + '"}')
    say('{"e":"test","i":0,"s":"error","t":0,"o":"' + text + '","msg":"' + text + '"}')
    say('{"e":"test","i":1,"s":"error","t":0,"o":"' + text + '","msg":"' + text + '"}')
    print(text)
    raise ValueError(text)
"""
    spec, secrets = secret_spec()
    outcome = CodeRunnerEvaluator().evaluate(request_for(answer, spec))
    assert outcome.details["tests"][0]["stdout"] == "forged"  # only what it said before the release
    assert_nothing_hidden_leaks(outcome, secrets)


def test_the_feedback_names_hidden_tests_and_says_nothing_else_of_them():
    answer = "def f(x):\n    if x == 'shown':\n        return x\n    raise ValueError(x)\n"
    spec, secrets = secret_spec()
    outcome = CodeRunnerEvaluator().evaluate(request_for(answer, spec))
    assert outcome.feedback == "1 of 4 tests passed; failing: hidden_0 (error), hidden_1 (error), hidden_2 (error)."
    assert_nothing_hidden_leaks(outcome, secrets)
