"""Path converters of the project, registered once (InterviewPrepConfig.ready)."""

from __future__ import annotations

# Primary keys are PostgreSQL bigints; a larger number can name no row.
ID_MAX = 2**63 - 1


class IdConverter:
    """A row id, 1 to 2**63-1: anything else does not match, so it is simply "not found"
    (a bigger number would otherwise reach PostgreSQL as `numeric` and fail there)."""

    regex = "[1-9][0-9]{0,18}"

    def to_python(self, value: str) -> int:
        number = int(value)
        if number > ID_MAX:
            raise ValueError(value)  # Django reads a ValueError as "this route does not match"
        return number

    def to_url(self, value: int) -> str:
        return str(int(value))
