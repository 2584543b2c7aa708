"""A regular (not editable) install carries the whole application: every module and file of
its packages, the migrations and the sandbox's harness among them."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.nodb

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("interviewprep", "attempts", "evaluation")
LEFT_OUT = ("__pycache__",)


def _package_files(root: Path) -> set[str]:
    return {
        path.relative_to(root).as_posix()
        for package in PACKAGES
        for path in (root / package).rglob("*")
        if path.is_file() and not any(part in LEFT_OUT for part in path.parts) and path.suffix != ".pyc"
    }


def test_the_wheel_carries_every_module_and_file_of_the_packages(tmp_path):
    # Built from a copy, so the checkout gets no build/ or egg-info of the build's.
    source = tmp_path / "source"
    source.mkdir()
    shutil.copy(ROOT / "pyproject.toml", source)
    for package in PACKAGES:
        shutil.copytree(ROOT / package, source / package, ignore=shutil.ignore_patterns(*LEFT_OUT, "*.pyc"))
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "--wheel-dir", str(tmp_path), str(source)],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    (wheel,) = tmp_path.glob("interviewprep-*.whl")
    carried = {name for name in zipfile.ZipFile(wheel).namelist() if ".dist-info/" not in name}
    expected = _package_files(source)
    assert expected - carried == set(), "left out of the wheel"
    assert any("/migrations/0001_" in name for name in carried)
    assert "evaluation/sandbox/_warden.py" in carried
