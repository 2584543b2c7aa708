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


# None today: the last two (a database cut dead-lettering a valid job, a worker that stopped
# consuming after a failed ack) are fixed, and the drill counts a recurrence as a violation.
KNOWN_ISSUES: tuple[KnownIssue, ...] = ()


def known_issue(violation: str, fired: set[str], tolerated: set[str]) -> KnownIssue | None:
    for issue in KNOWN_ISSUES:
        if issue.id in tolerated and issue.needs_fault & fired and issue.pattern.search(violation):
            return issue
    return None
