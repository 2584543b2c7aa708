"""`python -m interviewprep.procfile_exec NAME`: become the Procfile's NAME line.

What a systemd unit runs (deploy/systemd/), so the Procfile stays the one list of the processes'
commands. The line runs as `make run` runs it (bash, this venv's scripts first on PATH, from the
checkout), under `exec`: the process the supervisor started is the server itself, which gets its
stop signal directly.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path

from interviewprep.processes import ROOT, ProcessError, procfile_line, venv_path


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m interviewprep.procfile_exec")
    parser.add_argument("name", help="the Procfile line to run")
    parser.add_argument("--procfile", type=Path, default=ROOT / "Procfile", help="another Procfile (tests)")
    args = parser.parse_args(argv)
    try:
        command = procfile_line(args.name, args.procfile)
    except ProcessError as exc:
        print(f"interviewprep: {exc}", file=sys.stderr)
        return 2
    env = dict(os.environ)
    env["PATH"] = venv_path(env)
    bash = shutil.which("bash", path=env["PATH"]) or "/bin/bash"
    os.chdir(ROOT)
    os.execve(bash, [bash, "-c", f"exec {command}"], env)  # noqa: S606 - the Procfile's own line, as make run runs it
    return 1  # not reached: execve returns only by raising


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
