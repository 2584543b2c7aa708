"""Print, per written question, how its labelled answers and the generated stuffing score, so an
author can tune the example sentences: strong must beat weak, every stuffing stay below honest_short."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from evaluation.evaluators.rubric import local_grade
from evaluation.evaluators.written.calibration import bank_calibrate


class Command(BaseCommand):
    help = "Grade every written question's labelled answers and generated stuffing, and show the gaps."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--dir", default=str(Path(settings.BASE_DIR) / "questions"), help="the question bank")
        parser.add_argument("--slug", help="only this question")

    def handle(self, *args, **options) -> None:
        calibrated = bank_calibrate(directory=Path(options["dir"]), grade=local_grade, slug=options["slug"])
        if not calibrated:
            raise CommandError("no written question with labelled_answers found")
        failing = 0
        for question in calibrated:
            self.stdout.write(question.slug)
            for result in question.results:
                self.stdout.write(f"  {result.label:32} {result.shown}")
            scores = {r.label: r.outcome.score for r in question.results}
            if scores.get("strong") is not None and scores.get("weak") is not None:
                self.stdout.write(f"  {'gap strong - weak':32} {scores['strong'] - scores['weak']:5.1f}")
            for problem in question.problems:
                self.stdout.write(self.style.ERROR(f"  ! {problem}"))
            failing += bool(question.problems)
        self.stdout.write(f"{len(calibrated)} questions, {failing} out of order")
