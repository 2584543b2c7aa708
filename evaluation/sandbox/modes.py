"""Which isolation layers work on this machine, found once per process by trying them.

The probe launches the real warden (so it proves exactly what a submission will get):
first inside bubblewrap, and if bwrap cannot create its namespaces, without it. In both the
warden reports whether it was handed a seccomp filter (built on the host with Debian's
python3-seccomp, see `_prepare.py`) and which Landlock ABI the kernel offers, then applies
them. The result is cached; a worker should call `current_mode()` once at start so the first
submission does not pay for the probe and the preparation (~50 ms) and /healthz can say
which mode is in force.

`SANDBOX_MODE` (read once, at the first probe) may name a weaker mode to force, e.g.
`rlimits+uid+seccomp+landlock`, or `refused`. A mode needing a layer the probe did not find
is ignored: the variable can only take isolation away, never claim more than exists.
"""

from __future__ import annotations

import logging
import os
import threading

from evaluation.evaluators.base import PermanentEvaluationError, TransientEvaluationError
from evaluation.sandbox.launch import Layers, bwrap_path, forget_prepared, launch
from evaluation.sandbox.request import BoxRequest

logger = logging.getLogger(__name__)

REFUSED = "refused"
PROBE_WALL_S = 3.0
_lock = threading.Lock()
_cached: Layers | None = None
_probed = False


def _probe_once(layers: Layers) -> Layers | None:
    try:
        run = launch(layers, BoxRequest(probe=True), cpu_limit_s=1.0, memory_bytes=64 << 20, wall_s=PROBE_WALL_S)
    except TransientEvaluationError as exc:
        logger.warning("sandbox probe %s could not start: %s", layers.name, exc)
        return None
    found = run.event("probe")
    if found is None or run.event("ready") is None or run.exit_code != 0:
        logger.info(
            "sandbox probe %s failed (exit %s, signal %s): %s",
            layers.name, run.exit_code, run.signal, run.stderr_head[:300],
        )  # fmt: skip
        return None
    landlock = isinstance(found.get("landlock"), int) and found["landlock"] > 0
    return Layers(layers.bwrap, layers.uid, bool(found.get("seccomp")), landlock)


def probe_layers() -> Layers | None:
    """Uncached: the strongest combination that starts here, or None when nothing does."""
    as_root = os.geteuid() == 0
    if not os.access("/usr/bin/python3", os.X_OK):
        logger.warning("sandbox: /usr/bin/python3 is missing; candidate code cannot run")
        return None
    if bwrap_path() is not None:
        found = _probe_once(Layers(bwrap=True, uid=as_root, seccomp=False, landlock=False))
        if found is not None:
            return found
    return _probe_once(Layers(bwrap=False, uid=as_root, seccomp=False, landlock=False))


def parse_mode(name: str, *, as_root: bool) -> Layers | None:
    parts = set(name.split("+"))
    if not parts <= {"bwrap", "rlimits", "uid", "seccomp", "landlock"}:
        return None
    if ("bwrap" in parts) == ("rlimits" in parts):
        return None
    uid = "uid" in parts or ("bwrap" in parts and as_root)
    return Layers("bwrap" in parts, uid, "seccomp" in parts, "landlock" in parts)


def _weaker_or_equal(wanted: Layers, available: Layers) -> bool:
    return (
        (not wanted.bwrap or available.bwrap)
        and (not wanted.uid or available.uid)
        and (not wanted.seccomp or available.seccomp)
        and (not wanted.landlock or available.landlock)
    )


def current_layers() -> Layers | None:
    """The layers in force for this process, or None when candidate code must not run."""
    global _cached, _probed
    with _lock:
        if not _probed:
            found = probe_layers()
            forced = os.environ.get("SANDBOX_MODE", "").strip()
            if forced == REFUSED:
                found = None
            elif forced and found is not None:
                wanted = parse_mode(forced, as_root=os.geteuid() == 0)
                if wanted is not None and _weaker_or_equal(wanted, found):
                    found = wanted
                else:
                    logger.warning("SANDBOX_MODE=%s ignored: not available here", forced)
            _cached = found if found is not None and found.allowed else None
            _probed = True
        return _cached


def current_mode() -> str:
    layers = current_layers()
    return layers.name if layers is not None else REFUSED


def forget_probe() -> None:
    """Probe again on next use (after a layer failed to apply, or in tests)."""
    global _cached, _probed
    with _lock:
        _cached, _probed = None, False
    forget_prepared()


def layers_for(mode: str | None) -> Layers:
    """The layers to run a submission under; `mode` may only weaken what was probed."""
    available = current_layers()
    if available is None:
        raise PermanentEvaluationError(
            "the code sandbox is refused on this machine: it needs seccomp (Debian's "
            "python3-seccomp), or Landlock inside bubblewrap, and candidate code is never "
            "run without them; run scripts/setup-system.sh"
        )
    if mode is None or mode == available.name:
        return available
    if mode == REFUSED:
        raise PermanentEvaluationError("the code sandbox was asked to refuse to run code")
    wanted = parse_mode(mode, as_root=os.geteuid() == 0)
    if wanted is None or not wanted.allowed or not _weaker_or_equal(wanted, available):
        raise PermanentEvaluationError(f"sandbox mode {mode!r} is not available here")
    return wanted
