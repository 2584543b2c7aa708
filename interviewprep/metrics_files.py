"""The multiprocess metrics folder kept small: dead processes' files merged into one per type.

prometheus_client writes one file per process and type (`counter_<id>.db`), and the scrape
reads them all. Without merging, the folder grows with every gunicorn or Celery child that
ever lived, and so does every scrape. Here:

- A process's id is its pid and its start time (`<pid>@<ticks>`), so a new process that gets a
  dead one's pid (pid_max is small) opens files of its own, never the dead one's, and a file's
  writer is known dead when no process with that pid and start time runs.
- `metrics_files_compact` adds the dead writers' counters and histograms into
  `counter_merged.db` / `histogram_merged.db`: the new merged file is written aside, renamed
  over the old one, and the dead files removed, all under the folder's lock held exclusively.
  `metrics_files_read` holds the same lock shared while it reads, so a scrape sees each count
  once: before the merge (in the dead file) or after it (in the merged file), never both or
  neither.
- Where /proc does not tell start times, nothing is merged (the folder grows, as before).
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import re
from collections.abc import Iterator
from pathlib import Path

from prometheus_client import values
from prometheus_client.metrics_core import Metric
from prometheus_client.mmap_dict import MmapedDict, mmap_key
from prometheus_client.multiprocess import MultiProcessCollector

logger = logging.getLogger(__name__)

LOCK_NAME = ".lock"  # not *.db: the collector reads only those
MERGED = "merged"
_WRITER_FILE = re.compile(r"^(counter|histogram)_(\d+)@(\d+)\.db$")
_identifiers: dict[int, str] = {}
_installed = [False]


def _start_ticks(pid: int) -> str | None:
    """The process's start time in clock ticks after boot (/proc/<pid>/stat, field 22), or None
    when no such process runs."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: count from its closing one.
    return stat[stat.rindex(")") + 2 :].split()[19]


def process_identifier() -> str:
    """This process's name in its metric files; called by prometheus_client on every write, so
    looked up once per pid (a fork changes the pid, and the child gets a name of its own)."""
    pid = os.getpid()
    found = _identifiers.get(pid)
    if found is None:
        found = _identifiers[pid] = f"{pid}@{_start_ticks(pid) or 0}"
    return found


def install_process_identifier(identifier=process_identifier) -> None:
    """Name this process's metric files by `identifier`; the first call wins, before any metric
    is declared (interviewprep/metrics.py calls it with the default)."""
    if _installed[0]:
        return
    values.ValueClass = values.MultiProcessValue(identifier)
    _installed[0] = True


def _folder(path: str | os.PathLike | None) -> Path:
    return Path(path or os.environ["PROMETHEUS_MULTIPROC_DIR"])


@contextlib.contextmanager
def _locked(folder: Path, mode: int) -> Iterator[None]:
    with open(folder / LOCK_NAME, "a") as handle:
        fcntl.flock(handle, mode)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def metrics_files_read(path: str | os.PathLike | None = None) -> list[Metric]:
    """Every process's counters and histograms, merged as a scrape shows them."""
    folder = _folder(path)
    with _locked(folder, fcntl.LOCK_SH):
        return list(MultiProcessCollector(None, path=str(folder)).collect())


def _dead_writers(folder: Path) -> dict[str, list[Path]]:
    dead: dict[str, list[Path]] = {}
    for file in folder.iterdir():
        match = _WRITER_FILE.match(file.name)
        if match and _start_ticks(int(match[2])) != match[3]:
            dead.setdefault(match[1], []).append(file)
    return dead


def metrics_files_compact(path: str | os.PathLike | None = None) -> int:
    """Merge the files of dead writers into the folder's merged files; the count merged."""
    folder = _folder(path)
    if _start_ticks(os.getpid()) is None:
        return 0
    with _locked(folder, fcntl.LOCK_EX):
        dead = _dead_writers(folder)
        for typ, files in dead.items():
            merged = folder / f"{typ}_{MERGED}.db"
            sources = [*files, merged] if merged.exists() else files
            aside = folder / f"{typ}_{MERGED}.db.new"  # not *.db until renamed: the collector skips it
            aside.unlink(missing_ok=True)
            out = MmapedDict(str(aside))
            try:
                # accumulate=False keeps histogram buckets per bucket, as the files hold them.
                for metric in MultiProcessCollector.merge([str(f) for f in sources], accumulate=False):
                    for sample in metric.samples:
                        key = mmap_key(
                            metric.name,
                            sample.name,
                            list(sample.labels),
                            list(sample.labels.values()),
                            metric.documentation,
                        )
                        out.write_value(key, sample.value, 0.0)
            finally:
                out.close()
            os.replace(aside, merged)
            for file in files:
                file.unlink()
    count = sum(len(files) for files in dead.values())
    if count:
        logger.info("metric files of dead processes merged", extra={"files": count})
    return count
