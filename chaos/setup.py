"""Done once per drill: the template database every round copies (migrated, the question bank
loaded, the drill's instant questions and a staff user added), and the question pool."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import yaml

from chaos.commands import manage, manage_json
from chaos.services import ChaosSetupError, Postgres
from chaos.workload import Question
from interviewprep.processes import ROOT, RedisServer

FIXTURE = Path(__file__).with_name("instant_questions.json")
STAFF_USERNAME = "chaos-staff"
STAFF_PASSWORD = "chaos-staff-Password-1"  # noqa: S105 - a throwaway database's staff user
# Settings that make failures show in seconds, as tests/settings.py does for the tests.
DRILL_SETTINGS = {
    # Throttling is no fault: off, so every refusal the drill sees is one it must explain. (A
    # setting this checkout does not know yet is ignored: these are the ones of main's runs work.)
    "SUBMIT_RATE": "off",
    "REGISTER_RATE": "off",
    "RUN_RATE": "off",
    "HEARTBEAT_INTERVAL": "0.5",
    "RETRY_BASE_DELAY": "0.3",
    "RETRY_MAX_DELAY": "3",
    "JOB_TIME_LIMIT": "30",
    "JOB_MAX_TRIES": "5",
    "SWEEP_INTERVAL": "2",
    # Above the longest planned outage, so only a dead run's job or a lost message is swept.
    "STALE_JOB_AFTER": "8",
    "LOG_LEVEL": "WARNING",
}
# Inherited values that would point a process at something other than the round's own state.
_DROPPED = ("EVALUATOR_FAULTS", "CELERY_BROKER_URL", "CELERY_READY_FILE", "DJANGO_SETTINGS_MODULE", "PORT")


def process_env(*, database_url: str, redis_url: str, broker_url: str, metrics_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _DROPPED}
    env.update(DRILL_SETTINGS)
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "interviewprep.settings",
            "DATABASE_URL": database_url,
            "REDIS_URL": redis_url,
            "CELERY_BROKER_URL": broker_url,
            "PROMETHEUS_MULTIPROC_DIR": str(metrics_dir),
            # This checkout's code, whichever checkout the shared venv was installed from.
            "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
            "PYTHONUNBUFFERED": "1",
        }
    )
    return env


def template_create(pg: Postgres, name: str) -> list[dict]:
    """Migrated once; a round's `CREATE DATABASE .. TEMPLATE` copies it in a fraction of a second.
    Its active questions, as `attempts_state` lists them."""
    pg.create(name)
    redis = RedisServer("setup", parent_death=True)  # saving a user writes to the token cache
    scratch = Path(tempfile.mkdtemp(prefix="ip-chaos-setup-"))
    try:
        env = process_env(
            database_url=pg.url(name), redis_url=redis.url(0), broker_url=redis.url(1), metrics_dir=scratch
        )
        _template_fill(env)
        return manage_json(env, "attempts_state")["questions"]
    finally:
        redis.stop()
        shutil.rmtree(scratch, ignore_errors=True)


# One Django start for the four steps (each start costs a second of CPU): migrate, the bank, the
# drill's instant questions, a staff user for the cache-diff calls.
_FILL = """
from django.core.management import call_command
call_command("migrate", interactive=False, verbosity=0)
call_command("load_questions")
call_command("loaddata", {fixture!r}, verbosity=0)
call_command("createsuperuser", interactive=False, username={username!r}, email="chaos@localhost", verbosity=0)
"""


def _template_fill(env: dict[str, str]) -> None:
    code = _FILL.format(fixture=str(FIXTURE), username=STAFF_USERNAME)
    done = manage(
        {**env, "DJANGO_SUPERUSER_PASSWORD": STAFF_PASSWORD}, "shell", "--no-imports", "-c", code, timeout=600
    )
    if done.returncode != 0:
        output = (done.stdout + done.stderr)[-3000:]
        raise ChaosSetupError(f"filling the template failed ({done.returncode}):\n{output}")


def question_pool(rows: list[dict]) -> list[Question]:
    """The bank's questions with what a candidate would answer (reference and wrong answers from
    the files; the product never gives them out), and the drill's instant ones."""
    answers: dict[str, dict] = {}
    for path in sorted((ROOT / "questions").rglob("*.yaml")):
        data = yaml.load(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # noqa: S506
        answers[data["slug"]] = data
    pool = []
    for row in rows:
        data = answers.get(row["slug"], {})
        pool.append(
            Question(
                row["id"],
                row["slug"],
                row["kind"],
                row["evaluator"],
                data.get("reference_answer", ""),
                data.get("wrong_answer", ""),
            )
        )
    return pool
