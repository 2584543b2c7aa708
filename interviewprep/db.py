"""The statements of the hot paths: the PL/pgSQL functions (attempts/sql, evaluation/sql) and
the outbox publisher's two."""

from __future__ import annotations

import time

import psycopg
from django.db import DEFAULT_DB_ALIAS, connections
from psycopg.pq import ExecStatus

TUPLES_OK = ExecStatus.TUPLES_OK


def call_prepared(sql: str, params: list) -> tuple | None:
    """The first row of `run_prepared`, or None."""
    rows = run_prepared(sql, params)
    return rows[0] if rows else None


def run_prepared(sql: str, params: list) -> list[tuple]:
    """The rows of `sql` on Django's connection (so inside its transaction, if one is open), as
    a server-side prepared statement: Django's own cursors bind on the client, and quoting the
    parameters into the text was measured at about a tenth of an evaluation job's CPU.

    Rows come in binary, which psycopg decodes in C: its text decoding (Django's timestamp
    loader in Python, a loader made per column per call) and the cursor's column descriptions
    were measured at about a third of this function's CPU. (So a jsonb comes back decoded.)"""
    conn = connections[DEFAULT_DB_ALIAS]
    # As Django's own cursors do: a connection not yet checked since the last request or task
    # (CONN_HEALTH_CHECKS) is checked first, and replaced if the database dropped it.
    if not conn.in_atomic_block:
        conn.close_if_health_check_failed()
    conn.ensure_connection()
    started = time.monotonic()
    try:
        with conn.wrap_database_errors, psycopg.Cursor(conn.connection) as cursor:
            cursor.execute(sql, params, prepare=True, binary=True)
            result = cursor.pgresult
            return cursor.fetchall() if result is not None and result.status == TUPLES_OK else []
    finally:
        if conn.queries_logged:
            # Counted like any query by Django's debug log (and the tests' query counts).
            conn.queries_log.append({"sql": sql, "time": f"{time.monotonic() - started:.3f}"})
