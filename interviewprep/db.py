"""The statements of the hot paths: the PL/pgSQL functions (attempts/sql, evaluation/sql) and
the outbox publisher's two."""

from __future__ import annotations

import time

import psycopg
from django.db import connection


def call_prepared(sql: str, params: list) -> tuple | None:
    """The first row of `run_prepared`, or None."""
    rows = run_prepared(sql, params)
    return rows[0] if rows else None


def run_prepared(sql: str, params: list) -> list[tuple]:
    """The rows of `sql` on Django's connection (so inside its transaction, if one is open), as
    a server-side prepared statement: Django's own cursors bind on the client, and quoting the
    parameters into the text was measured at about a tenth of an evaluation job's CPU."""
    # As Django's own cursors do: a connection not yet checked since the last request or task
    # (CONN_HEALTH_CHECKS) is checked first, and replaced if the database dropped it.
    if not connection.in_atomic_block:
        connection.close_if_health_check_failed()
    connection.ensure_connection()
    started = time.monotonic()
    try:
        with connection.wrap_database_errors, psycopg.Cursor(connection.connection) as cursor:
            cursor.execute(sql, params, prepare=True)
            return cursor.fetchall() if cursor.description else []
    finally:
        if connection.queries_logged:
            # Counted like any query by Django's debug log (and the tests' query counts).
            connection.queries_log.append({"sql": sql, "time": f"{time.monotonic() - started:.3f}"})
