"""The harness templates (evaluation/languages/harness/) are real programs: each language's,
filled for questions of the bank and for signatures of every type, passes its own toolchain's
check (g++ -fsyntax-only, javac, go vet and gofmt, node --check), with the flags the language
compiles with. A template is filled only when every placeholder gets exactly one value, and
the limits the harnesses share with the Python side are one constant each."""

from __future__ import annotations

import ast
import os
import subprocess
from pathlib import Path

import pytest

from evaluation.languages import base, templates
from evaluation.languages.base import Language
from evaluation.languages.cpp import PRELUDE_NAME, PROGRAM, SUPPORT_OBJECT, SUPPORT_SOURCE, Cpp
from evaluation.languages.go import GOROOT, Go
from evaluation.languages.go import HARNESS_FILE as GO_HARNESS
from evaluation.languages.java import Java
from evaluation.languages.javascript import HARNESS_FILE as JS_HARNESS
from evaluation.languages.javascript import NODE, JavaScript
from evaluation.languages.templates import HARNESS_DIR, TemplateError, fill, template
from evaluation.languages.types import Signature, signature_parse
from tests.questions.bank import BANK_DIR, bank_questions

pytestmark = pytest.mark.nodb

REPO = Path(__file__).resolve().parents[2]
EXTENSIONS = {"javascript": ".js", "java": ".java", "cpp": ".cpp", "go": ".go"}
# Between them: every return shape the bank has (a number, text, a bool, a list of lists, a
# list of floats, an optional), each answered by its reference in every language.
BANK_SLUGS = ("merge-busy-blocks", "first-recurring-item", "running-median", "brackets-balanced", "compress-runs")
# What the bank does not have, answered by each language's starter: maps, optionals and lists
# of every type inside one another, and no arguments at all.
EVERY_TYPE = signature_parse(
    {"function": "every_type", "summary": "Every type at once.",
     "params": [{"name": "count", "type": "int"}, {"name": "ratio", "type": "float"},
                {"name": "label", "type": "string"}, {"name": "flag", "type": "bool"},
                {"name": "grid", "type": "list<list<int>>"}, {"name": "weights", "type": "map<string,float>"},
                {"name": "maybe", "type": "optional<string>"}, {"name": "rows", "type": "list<map<string,bool>>"},
                {"name": "gaps", "type": "list<optional<int>>"}],
     "returns": "map<string,list<optional<int>>>"}
)  # fmt: skip
NO_ARGUMENTS = signature_parse({"function": "pick_one", "params": [], "returns": "optional<float>", "summary": ""})
CHECK_TIMEOUT_S = 120


def cases(language_id: str) -> list[tuple[str, Signature, str | None]]:
    """(id, signature, answer); None: the language's starter."""
    questions = {q["slug"]: q for q in bank_questions("coding")}
    found = []
    for slug in BANK_SLUGS:
        answer = (BANK_DIR / "references" / language_id / f"{slug}{EXTENSIONS[language_id]}").read_text("utf-8")
        found.append((slug, signature_parse(questions[slug]["evaluation_spec"]["signature"]), answer))
    return [*found, ("every-type", EVERY_TYPE, None), ("no-arguments", NO_ARGUMENTS, None)]


def written(language: Language, signature: Signature, answer: str | None, directory: Path) -> None:
    sources = language.sources(signature, language.starter(signature) if answer is None else answer)
    for name, text in sources.items():
        (directory / name).write_text(text, encoding="utf-8")


def toolchain(path: str) -> str:
    assert os.access(path, os.X_OK), f"{path} is missing: the template check needs it (scripts/setup-system.sh)"
    return path


def check(argv: list[str], directory: Path, env: dict[str, str]) -> str:
    toolchain(argv[0])
    done = subprocess.run(
        argv, cwd=directory, env=env, capture_output=True, text=True, timeout=CHECK_TIMEOUT_S, check=False
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, f"{' '.join(argv)} refused the filled template:\n{output[-4000:]}"
    return output


def syntax_only(argv: list[str], *dropped: str) -> list[str]:
    """A compile command as a syntax check: no output file, nothing linked."""
    return [arg for arg in argv if arg not in dropped] + ["-fsyntax-only"]


@pytest.mark.parametrize("case", cases("cpp"), ids=lambda case: case[0])
def test_cpp_harness_is_cpp(case, tmp_path):
    _, signature, answer = case
    cpp = Cpp()
    written(cpp, signature, answer, tmp_path)
    check(syntax_only(cpp.compile_argv(str(tmp_path)), "-o", PROGRAM), tmp_path, cpp.compile_env(str(tmp_path)))


def test_cpp_prebuilt_harness_and_its_fixed_part_are_cpp(tmp_path):
    """With `prebuilt_dir`: the harness against the prelude header, and the fixed part's source."""
    prebuilt, box = tmp_path / "prebuilt", tmp_path / "box"
    prebuilt.mkdir()
    box.mkdir()
    cpp = Cpp()
    for name, text in cpp.prebuild_files().items():
        (prebuilt / name).write_text(text, encoding="utf-8")
    cpp.use_prebuilt(str(prebuilt))
    _, signature, answer = cases("cpp")[0]
    written(cpp, signature, answer, box)
    env = cpp.compile_env(str(box))
    check(syntax_only(cpp.compile_argv(str(box)), "-o", PROGRAM, str(prebuilt / SUPPORT_OBJECT)), box, env)
    support = cpp.prebuild_argvs(str(prebuilt))[-1]
    assert support[-1] == str(prebuilt / SUPPORT_SOURCE) and (prebuilt / PRELUDE_NAME).exists()
    check(syntax_only(support, "-c", "-o", str(prebuilt / SUPPORT_OBJECT)), prebuilt, env)


@pytest.mark.parametrize("case", [*cases("java"), ("prebuild", None, None)], ids=lambda case: case[0])
def test_java_harness_compiles(case, tmp_path):
    _, signature, answer = case
    java = Java()
    if signature is None:  # what the javac archive is made from
        for name, text in java.prebuild_files().items():
            (tmp_path / name).write_text(text, encoding="utf-8")
    else:
        written(java, signature, answer, tmp_path)
    check(java.compile_argv(str(tmp_path)), tmp_path, java.compile_env(str(tmp_path)))
    assert (tmp_path / "InterviewPrepMain.class").exists() and (tmp_path / "InterviewPrepBridge.class").exists()


@pytest.fixture(scope="module")
def go_cache(tmp_path_factory):
    """One build cache for every Go check: vet reads the standard library's export data there."""
    return tmp_path_factory.mktemp("gocache")


@pytest.mark.parametrize("case", cases("go"), ids=lambda case: case[0])
def test_go_harness_is_vetted_and_gofmt_clean(case, tmp_path, go_cache):
    _, signature, answer = case
    go = Go()
    written(go, signature, answer, tmp_path)
    env = go.compile_env(str(tmp_path)) | {"GOCACHE": str(go_cache)}
    check([toolchain(f"{GOROOT}/bin/go"), "vet", go.answer_file, GO_HARNESS], tmp_path, env)
    unformatted = check([toolchain(f"{GOROOT}/bin/gofmt"), "-l", GO_HARNESS], tmp_path, env)
    assert unformatted == "", f"gofmt would reformat the filled harness:\n{unformatted}"


@pytest.mark.parametrize("case", cases("javascript"), ids=lambda case: case[0])
def test_javascript_harness_parses(case, tmp_path):
    _, signature, answer = case
    written(JavaScript(), signature, answer, tmp_path)
    check([toolchain(NODE), "--check", JS_HARNESS], tmp_path, {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})


# ---- filling ----


def test_every_template_file_is_read(monkeypatch, tmp_path):
    read = []
    monkeypatch.setattr(templates, "template", lambda name: read.append(name) or template(name))
    cpp = Cpp()
    for language in (cpp, Java(), Go(), JavaScript()):
        language.sources(EVERY_TYPE, "")
    cpp.use_prebuilt(str(tmp_path))
    cpp.sources(EVERY_TYPE, "")
    cpp.prebuild_files()
    Java().prebuild_files()
    assert set(read) == {path.name for path in HARNESS_DIR.iterdir()}


def test_a_placeholder_left_unfilled_raises():
    with pytest.raises(TemplateError, match=r"no value for \['ARGS'\]"):
        fill("harness.js", {"FUNCTION": '"f"', "READERS": "", "WRITERS": "", "WRITE_RETURN": "write_int"})


def test_a_value_for_no_placeholder_raises():
    values = {"FUNCTION": '"f"', "READERS": "", "ARGS": "", "WRITERS": "", "WRITE_RETURN": "write_int"}
    assert 'const FUNCTION = "f";' in fill("harness.js", values)
    with pytest.raises(TemplateError, match=r"no placeholder .* \['EXTRA'\]"):
        fill("harness.js", values | {"EXTRA": "1"})
    with pytest.raises(TemplateError, match=r"\['EXCERPT_CHARS'\]"):  # a shared limit is never the caller's
        fill("harness.js", values | {"EXCERPT_CHARS": "10"})


def test_a_value_is_put_in_as_it_is_never_read_for_placeholders():
    values = {"FUNCTION": '"@ARGS@"', "READERS": "", "ARGS": "x", "WRITERS": "", "WRITE_RETURN": "w"}
    assert 'const FUNCTION = "@ARGS@";' in fill("harness.js", values)


# ---- the shared limits ----


def test_no_template_writes_a_shared_limit_itself():
    for path in HARNESS_DIR.iterdir():
        text = template(path.name)
        for written_out in ("1 << 20", "1L << 20", "= 1024", "= 200;", " 1 MiB"):
            assert written_out not in text, f"{path.name} writes {written_out!r}: use its placeholder (LIMITS)"


def test_the_warden_keeps_the_same_limits():
    """_warden.py runs standalone in the box and cannot import them: its copies must agree."""
    tree = ast.parse((REPO / "evaluation" / "sandbox" / "_warden.py").read_text(encoding="utf-8"))
    values = {
        node.targets[0].id: eval(compile(ast.Expression(node.value), "_warden.py", "eval"), {"__builtins__": {}})
        for node in tree.body
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
        and node.targets[0].id in ("EXCERPT_CHARS", "PRINT_LIMIT_CHARS", "VALUE_LIMIT_BYTES")
    }  # fmt: skip
    assert values == {
        "EXCERPT_CHARS": base.EXCERPT_CHARS,
        "PRINT_LIMIT_CHARS": base.PRINT_LIMIT,
        "VALUE_LIMIT_BYTES": base.VALUE_LIMIT,
    }
