"""The drill's own PostgreSQL databases, named `ip_chaos_*`, on the configured server (its Redis
servers are `interviewprep.processes.RedisServer`s, on free ports)."""

from __future__ import annotations

import contextlib
import os
import re
from urllib.parse import urlsplit

import psycopg
from psycopg import sql

from interviewprep.embedded import process_alive

PREFIX = "ip_chaos_"
DEFAULT_SERVER_URL = "postgres://postgres@127.0.0.1:5432/postgres"


class ChaosSetupError(RuntimeError):
    """The drill could not set a round up (not a finding about the product)."""


class Postgres:
    """Creates, copies and drops the drill's databases on one server."""

    def __init__(self, server_url: str) -> None:
        self.server_url = server_url

    def url(self, name: str) -> str:
        # libpq reads these URLs as they are (a socket folder in ?host= too), once the scheme is its own.
        return urlsplit(self.server_url)._replace(scheme="postgresql", path=f"/{name}").geturl()

    def connect(self, name: str = "postgres") -> psycopg.Connection:
        return psycopg.connect(self.url(name), autocommit=True, connect_timeout=5)

    def create(self, name: str, *, template: str | None = None) -> None:
        _check_name(name)
        with self.connect() as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
            if template:
                statement = sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
                    sql.Identifier(name), sql.Identifier(template)
                )
            else:
                statement = sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name))
            conn.execute(statement)

    def drop(self, name: str) -> None:
        _check_name(name)
        with contextlib.suppress(psycopg.Error), self.connect() as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))

    def drop_leftovers(self) -> list[str]:
        """Databases of drills that died without cleaning up (their pid is in the name)."""
        with self.connect() as conn:
            names = [
                row[0] for row in conn.execute("SELECT datname FROM pg_database WHERE datname LIKE 'ip\\_chaos\\_%'")
            ]
        dropped = []
        for name in names:
            match = re.fullmatch(rf"{PREFIX}(\d+)_.*", name)
            if match and int(match.group(1)) != os.getpid() and not process_alive(int(match.group(1))):
                self.drop(name)
                dropped.append(name)
        return dropped

    def terminate_backends(self, name: str) -> int:
        """Cut every connection to the database, as a failover or an idle-session killer does."""
        with self.connect() as conn:
            rows = conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
                [name],
            ).fetchall()
        return sum(1 for (done,) in rows if done)


def _check_name(name: str) -> None:
    if not re.fullmatch(rf"{PREFIX}[a-z0-9_]+", name):
        raise ChaosSetupError(f"refusing to touch database {name!r}: the drill owns only {PREFIX}* ones")
