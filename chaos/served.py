"""What readers are served once the round has settled: the cache against the database, and the
owner's read with `min_version`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from chaos.client import Client, Counters

if TYPE_CHECKING:
    from chaos.checks import Context


def check_served(data: dict, ctx: Context) -> tuple[list[str], int]:
    """The cache never serves an older version than the database: compared through the staff
    cache-diff call, then read as the owner with `min_version` set to the database's version."""
    out = []
    lagging = 0
    counters = Counters()
    staff = Client(ctx.port, counters, ctx.staff_token)
    token_of = {row["id"]: ctx.workload.users.get(row["username"]) for row in data["users"]}
    for attempt in data["attempts"]:
        where = f"attempt {attempt['id']}"
        answer = staff.send("GET", f"/api/v1/ops/attempts/{attempt['id']}/cache-diff/")
        if answer.status != 200:
            out.append(f"{where}: cache-diff answered {answer.status} {answer.body[:200]!r}")
            continue
        diff = answer.json()
        cached, database, floor = diff.get("cache"), diff["database"], diff.get("floor")
        if cached is not None:
            if cached["version"] > database["version"]:
                out.append(f"{where}: cache holds v{cached['version']}, ahead of the database's v{database['version']}")
            elif cached["version"] == database["version"] and not diff["consistent"]:
                out.append(f"{where}: cache and database differ at the same version: {diff}")
            elif cached["version"] < database["version"] and cached["version"] >= (floor if floor is not None else -1):
                if ctx.redis_paused:
                    lagging += 1
                else:
                    out.append(
                        f"{where}: cache would serve v{cached['version']} (floor {floor}),"
                        f" database is at v{database['version']}"
                    )
        owner = Client(ctx.port, counters, token_of[attempt["user_id"]])
        answer = owner.send("GET", f"/api/v1/attempts/{attempt['id']}/?min_version={database['version']}")
        if answer.status != 200:
            out.append(f"{where}: its owner's read answered {answer.status} {answer.body[:200]!r}")
            continue
        shown = answer.json()
        result = shown.get("result")
        if shown["version"] != database["version"] or shown["status"] != database["status"]:
            out.append(
                f"{where}: served v{shown['version']} {shown['status']} with min_version,"
                f" database v{database['version']} {database['status']}"
            )
        if (result is None) != (database["status"] != "completed") or (
            result is not None and result["submission_id"] != shown["latest_submission_id"]
        ):
            out.append(
                f"{where}: shown result {result and result['submission_id']}"
                f" for latest {shown['latest_submission_id']} ({shown['status']})"
            )
    return out, lagging
