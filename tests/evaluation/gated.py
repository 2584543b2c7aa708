"""An evaluator that waits at a gate per submission, so tests can order finishes exactly."""

import threading
from collections import defaultdict

from evaluation.evaluators.base import EvaluationOutcome, EvaluationRequest

entered: defaultdict[int, threading.Event] = defaultdict(threading.Event)
gates: defaultdict[int, threading.Event] = defaultdict(threading.Event)


def reset() -> None:
    entered.clear()
    gates.clear()


class GatedEvaluator:
    name = "gated"

    def evaluate(self, request: EvaluationRequest) -> EvaluationOutcome:
        entered[request.submission_id].set()
        if not gates[request.submission_id].wait(timeout=30):
            raise RuntimeError("gate never opened")
        return EvaluationOutcome(score=request.submission_id % 100, max_score=100, feedback="gated", details={})
