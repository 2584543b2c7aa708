"""One step's writes, sent to PostgreSQL as one statement.

A step of a transaction often writes several rows that need nothing back from each other: a
submission and its attempt moving, their state changes, the try's end, the job's fenced swap.
Sent one by one, each costs a round trip and a statement of its own. Queued on a `Writes` and
flushed, they go as one `WITH w0 AS (UPDATE ...), w1 AS (INSERT ...) SELECT ...`, each part
compiled by Django's own compilers as `save(update_fields=...)`, `QuerySet.update()` and
`bulk_create()` compile it, with their effect: `auto_now` fields stamped, new rows' primary
keys set on their objects, and a save whose row is gone failing with DatabaseError. An error in
any part fails the whole statement, and with it the caller's transaction.

The rule of a flush: PostgreSQL runs its parts on one snapshot, in no set order, so no two parts
may write the same row and none may depend on what another writes. Take what a part needs back
(a new row's id to refer to, a swap's verdict before going on) from a flush of its own.

    writes = Writes()
    transition(submission, ..., writes=writes)   # a save and a state change, queued
    fence = writes.update(EvaluationJob.objects.filter(...), status=...)
    writes.flush()                              # one statement
    if not fence.count: ...
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from django.db import DatabaseError, connections, models, transaction
from django.db.models.sql import InsertQuery, UpdateQuery


@dataclass(eq=False)
class Written:
    """What one queued write did, once its flush ran: how many rows it wrote."""

    count: int | None = None
    # An insert's objects, which get their primary keys; a save's description, whose row must exist.
    objs: list[models.Model] = field(default_factory=list)
    saved: str = ""


class Writes:
    def __init__(self, using: str = "default") -> None:
        self.using = using
        self._parts: list[tuple[str, list[Any], Written]] = []
        self._saved: set[tuple[str, Any]] = set()

    def __bool__(self) -> bool:
        return bool(self._parts)

    def save(self, obj: models.Model, fields: Iterable[str]) -> Written:
        """`obj.save(update_fields=fields)`: the fields' values as they are now."""
        meta = obj._meta
        if (meta.label, obj.pk) in self._saved:
            # Of two writes of one row in one statement, PostgreSQL applies one and says nothing.
            raise ValueError(f"{meta.label} {obj.pk} is saved twice in one flush: save it once, with every field")
        self._saved.add((meta.label, obj.pk))
        values = []
        for name in dict.fromkeys(fields):
            model_field = meta.get_field(name)
            values.append((model_field, None, model_field.pre_save(obj, False)))
        query = type(obj)._base_manager.using(self.using).filter(pk=obj.pk).query.chain(UpdateQuery)
        query.add_update_fields(values)
        return self._add_update(query, Written(saved=f"{meta.label} {obj.pk}"))

    def update(self, queryset: models.QuerySet, **values: Any) -> Written:
        """`queryset.update(**values)`; its `count` is the rows it matched."""
        query = queryset.query.chain(UpdateQuery)
        query.add_update_values(values)
        return self._add_update(query, Written())

    def insert(self, objs: Iterable[models.Model]) -> Written:
        """`bulk_create(objs)` of new objects of one model (their keys come from the database),
        without signals, as bulk_create has none."""
        objs = list(objs)
        if not objs:
            return Written(count=0)
        if any(obj.pk is not None for obj in objs):
            raise ValueError("insert() takes new objects; this one has its key already: save it")
        meta = objs[0]._meta
        fields = [f for f in meta.local_concrete_fields if not f.generated and f is not meta.auto_field]
        for obj in objs:
            obj._prepare_related_fields_for_save(operation_name="bulk_create")
        query = InsertQuery(type(objs[0]))
        query.insert_values(fields, objs)
        # Compiling stamps auto_now_add fields on the objects, as a save would.
        ((sql, params),) = query.get_compiler(using=self.using).as_sql()
        written = Written(objs=objs)
        self._parts.append((f"{sql} RETURNING {self._pk(meta)}", list(params), written))
        return written

    def flush(self) -> None:
        """Send what is queued, as one statement; nothing when nothing is."""
        parts, self._parts = self._parts, []
        self._saved.clear()
        if not parts:
            return
        ctes = ", ".join(f"w{n} AS ({sql})" for n, (sql, _, _) in enumerate(parts))
        # A part's rows come back in the order it wrote them: an insert's keys in its objects' order.
        columns = ", ".join(f"ARRAY(SELECT k FROM w{n})" for n in range(len(parts)))  # noqa: S608 - our names only
        # In a transaction of its own when the caller has none, so a part that fails or a save
        # that finds no row leaves nothing of the flush written.
        with transaction.atomic(using=self.using, savepoint=False):
            with connections[self.using].cursor() as cursor:
                cursor.execute(f"WITH {ctes} SELECT {columns}", [p for _, params, _ in parts for p in params])
                keys_per_part = cursor.fetchone()
            for (_, _, written), keys in zip(parts, keys_per_part, strict=True):
                if written.saved and not keys:
                    raise DatabaseError(f"Save with update_fields did not affect any rows ({written.saved}).")
        for (_, _, written), keys in zip(parts, keys_per_part, strict=True):
            written.count = len(keys)
            for obj, key in zip(written.objs, keys if written.objs else (), strict=True):
                obj.pk = key
                obj._state.adding = False
                obj._state.db = self.using

    def _add_update(self, query: UpdateQuery, written: Written) -> Written:
        sql, params = query.get_compiler(using=self.using).as_sql()
        if not sql:  # nothing to set, as an update_fields=[] save writes nothing
            written.count = 0
            return written
        self._parts.append((f"{sql} RETURNING {self._pk(query.model._meta)}", list(params), written))
        return written

    def _pk(self, meta) -> str:
        return f"{connections[self.using].ops.quote_name(meta.pk.column)} AS k"


@contextmanager
def writes_into(writes: Writes | None) -> Iterator[Writes]:
    """The caller's batch, or one of this step's own, sent at once when the step is done: how a
    write that may join its caller's statement is written."""
    if writes is not None:
        yield writes
        return
    own = Writes()
    yield own
    own.flush()
