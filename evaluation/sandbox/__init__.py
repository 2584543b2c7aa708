"""The code runner's sandbox: one locked-down box per submission.

Layers (docs/sandbox.md says what each one blocks):
bubblewrap (fresh namespaces, only /usr visible, read-only, sized /tmp) run as a per-slot
unprivileged uid, rlimits, an empty environment, Debian's `/usr/bin/python3 -I -S`, Landlock
(read-only standard library, no TCP, scoped signals and abstract sockets) and seccomp (no
sockets, no exec, no new processes). `current_mode()` names the layers in force; "refused"
means candidate code is never run.
"""

from evaluation.sandbox.modes import REFUSED, current_mode, forget_probe
from evaluation.sandbox.runner import BoxRun, LoadError, TestRun, run_python

__all__ = ["REFUSED", "BoxRun", "LoadError", "TestRun", "current_mode", "forget_probe", "run_python"]
