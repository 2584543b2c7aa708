"""The written-answer grader (system design, behavioural): its rubric format and length rule, and
the grading itself. `length_rule(spec)` is what the answer page shows before a submit."""

from evaluation.evaluators.written.spec import length_rule, validate_rubric_spec

__all__ = ["length_rule", "validate_rubric_spec"]
