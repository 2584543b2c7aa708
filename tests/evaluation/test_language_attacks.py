"""The attack suite, in every language: each attack is an answer to the warm-up question that
returns 0 when it was blocked (tests/evaluation/attacks/<language>.py). It runs through the
same path as the Run button, in the real sandbox, and must end bounded every time; after it,
nothing of the box is left running and the next answer is scored normally."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from evaluation.evaluators.code import code_run
from evaluation.languages import LANGUAGES
from tests.evaluation.sandbox_helpers import slots_watched
from tests.questions.bank import bank_questions

pytestmark = pytest.mark.nodb

ATTACKS = ("network", "write_outside", "read_outside", "fork_bomb", "memory", "output_flood", "cpu_forever",
           "signal_worker", "env_secrets", "exec_shell")  # fmt: skip
# The one refusal each attack must meet. The others are refused inside the answer, which then
# returns 0 ("ran"): an attack that merely threw would be an "error", and fails here.
STOPPED_BY = {"memory": "memory", "output_flood": "output_limit", "cpu_forever": "timeout"}


def _spec() -> dict:
    return next(q for q in bank_questions("coding") if q["slug"] == "sum-of-list")["evaluation_spec"]


REPOSITORY = str(Path(__file__).resolve().parents[2])


def _answer(language: str, attack: str) -> str:
    # The answers name the repository as /work/main; the attack reads this checkout's settings.
    return (
        importlib.import_module(f"tests.evaluation.attacks.{language}")
        .ATTACKS[attack]
        .replace("/work/main", REPOSITORY)
    )


@pytest.mark.parametrize("attack", ATTACKS)
@pytest.mark.parametrize("language", list(LANGUAGES))
def test_attack_is_blocked_and_bounded(language, attack, monkeypatch):
    with monkeypatch.context() as patch, slots_watched(patch) as slots:
        ran = code_run(spec=_spec(), answer=_answer(language, attack), inputs=[[[1, 2]]], language=language)
    assert ran["load_error"] is None, ran["load_error"]
    (case,) = ran["cases"]
    assert case["outcome"] == STOPPED_BY.get(attack, "ran"), case
    if case["outcome"] == "ran":
        assert case["got"] == "0", f"{attack} got through in {language}: {case}"
    # A box killed on its deadline is gone moments after its run ends, never later: looked at
    # under its own slot's uid while the slot is still held, so other runs cannot be counted.
    assert slots and all(slot["left"] in ([], None) for slot in slots), slots


@pytest.mark.parametrize("language", list(LANGUAGES))
def test_every_language_has_every_attack(language):
    assert set(importlib.import_module(f"tests.evaluation.attacks.{language}").ATTACKS) == set(ATTACKS)
