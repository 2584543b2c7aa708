"""Operating the written-answer grader: /healthz shows whether the model is usable here, a process
without it refuses prose jobs permanently, and calibrate_rubrics prints each question's gaps."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
import yaml
from django.core.management import call_command

from evaluation.evaluators import EvaluationRequest, PermanentEvaluationError, minilm
from evaluation.evaluators.rubric import local_grade
from interviewprep.per_process import PerProcess
from tests.evaluation import written_questions as W


@pytest.mark.django_db
def test_healthz_shows_the_prose_grader_ready(client) -> None:
    body = client.get("/healthz").json()
    assert body["prose_grader"] == {"status": "ok"}


@pytest.mark.nodb
def test_a_process_without_the_model_refuses_prose_jobs_permanently(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setattr(minilm, "MODELS_DIR", tmp_path)
    monkeypatch.setattr(minilm, "_EMBEDDER", PerProcess(minilm.embedder_load))
    request = EvaluationRequest(
        question_slug="q", question_kind="system_design", prompt=W.PROMPT, spec=W.SPEC, answer=W.STRONG
    )
    with pytest.raises(PermanentEvaluationError, match="^prose grader unavailable: no valid .*manifest.json"):
        local_grade(request)


@pytest.mark.nodb
def test_calibrate_rubrics_prints_every_labelled_answer_and_the_gap(tmp_path: Path) -> None:
    question = {
        "slug": "url-shortener",
        "kind": "system_design",
        "prompt": W.PROMPT,
        "evaluation_spec": W.SPEC,
        "labelled_answers": W.LABELLED,
    }
    (tmp_path / "url-shortener.yaml").write_text(yaml.safe_dump(question))
    out = io.StringIO()
    call_command("calibrate_rubrics", "--dir", str(tmp_path), stdout=out)
    lines = out.getvalue().splitlines()
    assert lines[0] == "url-shortener"
    assert [line.split()[0] for line in lines[1:4]] == ["strong", "weak", "honest_short"]
    assert any(line.split()[0] == "generated:bare_list" for line in lines)
    assert lines[-1] == "1 questions, 0 out of order"
