"""Product bugs the drill has found and that are not fixed yet, each matched narrowly.

A violation matching one is still printed, but counted apart when `--tolerate <id>` names it:
the CI drill tolerates them so that it keeps catching everything else meanwhile. Delete an
entry when its bug is fixed; `make chaos` (without --tolerate) counts them as violations.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class KnownIssue:
    id: str
    summary: str
    pattern: re.Pattern[str]
    needs_fault: frozenset[str]  # one of these must have fired in the round for the match to count


KNOWN_ISSUES = (
    KnownIssue(
        id="db-cut-dead-letters",
        summary=(
            "a database connection cut while a job runs makes job_record fail; Django's Atomic drops "
            "the broken connection, and job_run's catch-all records the OperationalError as a "
            "permanent error on a fresh one: a valid submission ends failed in the dead letters"
        ),
        pattern=re.compile(r"dead-lettered for a permanent error: (OperationalError|InterfaceError): "),
        needs_fault=frozenset({"pg-terminate"}),
    ),
    KnownIssue(
        id="worker-stops-consuming",
        summary=(
            "a broker pause longer than its socket timeout makes a worker's ack fail ('Couldn't ack', "
            "a known Celery behaviour); the worker never notices, never reconnects and takes no more "
            "messages. On worker-generate this also stops the sweeper (queue ops), so nothing recovers "
            "until the process is restarted: the Procfile has no liveness probe for it"
        ),
        pattern=re.compile(r"stopped consuming: .*Couldn't ack"),
        needs_fault=frozenset({"broker-pause", "broker-restart"}),
    ),
)


def known_issue(violation: str, fired: set[str], tolerated: set[str]) -> KnownIssue | None:
    for issue in KNOWN_ISSUES:
        if issue.id in tolerated and issue.needs_fault & fired and issue.pattern.search(violation):
            return issue
    return None
