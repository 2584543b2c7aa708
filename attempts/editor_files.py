"""The code editor's files that the attempt page loads, served from the npm package (ace-builds):
`ace.js`, the highlighting mode of each answer language, the extensions Ace loads on demand
(search, settings), and the two stylesheets with the images they point at.

Only these, not the package's 668 files: every web process indexes the files it serves when it
starts (WhiteNoise), which cost each process, and each test client, 0.1-0.15 s of CPU for the
whole package (docs/benchmarks.md, "The test suite").
"""

from __future__ import annotations

import os
import re
from functools import cached_property
from pathlib import Path

from django.conf import settings
from django.contrib.staticfiles.finders import BaseFinder
from django.core.files.storage import FileSystemStorage

from evaluation.languages import LANGUAGES

STYLESHEETS = ("ace.css", "theme/textmate.css")
_URL = re.compile(r"""url\(["']?([^"')]+)["']?\)""")


def _package() -> Path:
    return Path(settings.BASE_DIR) / "node_modules" / "ace-builds"


def editor_scripts(folder: Path) -> list[str]:
    modes = sorted({language.ace_mode.rsplit("/", 1)[-1] for language in LANGUAGES.values()})
    extensions = sorted(path.name for path in folder.glob("ext-*.js"))
    return ["ace.js", *(f"mode-{mode}.js" for mode in modes), *extensions]


def editor_stylesheets(folder: Path) -> list[str]:
    """The stylesheets and every file their `url(...)`s name, relative to `folder`."""
    names = list(STYLESHEETS)
    for sheet in STYLESHEETS:
        text = (folder / sheet).read_text(encoding="utf-8")
        for url in _URL.findall(text):
            if not url.startswith("data:"):
                names.append(os.path.normpath(Path(sheet).parent / url))
    return sorted(set(names))


class EditorFilesFinder(BaseFinder):
    """`vendor/ace/...` and `vendor/ace-css/...` for `{% static %}`, WhiteNoise and collectstatic."""

    @cached_property
    def _served(self) -> list[tuple[FileSystemStorage, list[str]]]:
        package = _package()
        scripts, styles = package / "src-min-noconflict", package / "css"
        served = []
        for prefix, folder, names in (
            ("vendor/ace", scripts, editor_scripts(scripts) if scripts.is_dir() else []),
            ("vendor/ace-css", styles, editor_stylesheets(styles) if styles.is_dir() else []),
        ):
            storage = FileSystemStorage(location=folder)
            storage.prefix = prefix
            served.append((storage, [name for name in names if (folder / name).is_file()]))
        return served

    def check(self, **kwargs):
        return []

    def find(self, path: str, find_all: bool = False, **kwargs):
        found = [
            storage.path(name)
            for storage, names in self._served
            for name in names
            if path == f"{storage.prefix}/{name}"
        ]
        return found if find_all else (found[0] if found else [])

    def list(self, ignore_patterns):
        for storage, names in self._served:
            for name in names:
                yield name, storage
