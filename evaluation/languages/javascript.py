"""JavaScript (Node.js): the answer is evaluated by `harness.js` (`harness/harness.js` filled in
from the signature) with the `vm` module.

No compile step: the harness reads `answer.js`, compiles it once as a `vm.Script` named
`answer.js` (so a SyntaxError and every stack frame name the candidate's own lines), and runs
it in a fresh `vm` context for every test, so no global, closure or cache carries from one
test to the next. The context has only the language's own built-ins and a `console` that the
harness captures: no `require`, no `process`, no timers. (`vm` is not a security boundary;
the box is. The context is still kept free of host objects, so that reaching Node's `process`
takes more than `this.constructor.constructor`.)

Types (the public contract): int -> number (an integral number, or a BigInt, in 64 bits),
float -> number, string, bool -> boolean, list -> Array (a typed array is accepted on
return), map -> plain object (a Map with string keys is accepted on return), optional -> null
or the value (undefined is accepted as null on return). Integers in arguments arrive as
numbers, exact up to 2**53.
"""

from __future__ import annotations

import os
import re
from typing import ClassVar

from evaluation.languages.base import Language
from evaluation.languages.templates import fill
from evaluation.languages.types import Signature, Type, camel

NODE = "/usr/bin/node"
HARNESS_FILE = "harness.js"  # in harness/, filled by `JavaScript.harness`
# Node prints a SyntaxError as "answer.js:LINE", the line's source, a line of carets, a blank
# line, then "SyntaxError: message" (as `node --check answer.js` and the vm module do).
_SYNTAX_ERROR = re.compile(
    r"^(?P<file>\S*answer\.js):(?P<line>\d+)\n(?P<source>.*)\n(?P<indent>[ \t]*)(?P<marks>\^*)\n+"
    r"(?P<msg>[A-Za-z]*Error: .*)$",
    re.MULTILINE,
)
_OUT_OF_MEMORY = ("JavaScript heap out of memory", "Fatal process out of memory", "Reached heap limit")


def js_type(kind: Type) -> str:
    """The type as JSDoc writes it, for the starter's comment."""
    if kind.kind == "list":
        item = js_type(kind.item)  # type: ignore[arg-type]
        return f"({item})[]" if "|" in item else f"{item}[]"
    if kind.kind == "map":
        return f"Object<string, {js_type(kind.item)}>"  # type: ignore[arg-type]
    if kind.kind == "optional":
        return f"{js_type(kind.item)}|null"  # type: ignore[arg-type]
    return {"int": "number", "float": "number", "string": "string", "bool": "boolean"}[kind.kind]


def _mangle(kind: Type) -> str:
    """list<map<string,int>> -> list_map_int: a JS identifier, one per type."""
    if kind.item is None:
        return kind.kind
    return f"{kind.kind}_{_mangle(kind.item)}"


# ---- per-type code generators: one small JS function per type the signature uses ----------


def _reader(kind: Type, out: dict[str, str]) -> str:
    """Define (in `out`) the function that reads a `kind` from the test tokens; return its name.
    The harness decodes into plain host values; the context gets them through its own JSON."""
    name = "read_" + _mangle(kind)
    if name in out:
        return name
    if kind.kind in ("int", "float"):
        body = "return Number(next());"
    elif kind.kind == "bool":
        body = 'return next() === "1";'
    elif kind.kind == "string":
        body = 'return Buffer.from(next().slice(1), "hex").toString("utf8");'
    elif kind.kind == "list":
        item = _reader(kind.item, out)  # type: ignore[arg-type]
        body = f"const items = [];\n  for (let n = Number(next()); n > 0; n--) items.push({item}());\n  return items;"
    elif kind.kind == "map":
        item = _reader(kind.item, out)  # type: ignore[arg-type]
        # No prototype: a key named __proto__ stays a key.
        body = (
            "const entries = Object.create(null);\n"
            "  for (let n = Number(next()); n > 0; n--) {\n"
            "    const key = read_string();\n"
            f"    entries[key] = {item}();\n"
            "  }\n"
            "  return entries;"
        )
        _reader(Type("string"), out)
    else:  # optional
        item = _reader(kind.item, out)  # type: ignore[arg-type]
        body = f'return next() === "1" ? {item}() : null;'
    out[name] = f"function {name}() {{\n  {body}\n}}"
    return name


def _writer(kind: Type, out: dict[str, str]) -> str:
    """Define (in `out`) the function that writes a returned `kind` as JSON; return its name.
    It refuses (BadValue) anything that does not fit the declared type."""
    name = "write_" + _mangle(kind)
    if name in out:
        return name
    if kind.kind == "int":
        body = (
            'if (typeof v === "number" && Number.isInteger(v) && v >= -(2 ** 63) && v < 2 ** 63) {\n'
            "    put(Number.isSafeInteger(v) ? String(v) : BigInt(v).toString());\n"
            '  } else if (typeof v === "bigint" && v >= -(2n ** 63n) && v < 2n ** 63n) {\n'
            "    put(v.toString());\n"
            "  } else {\n"
            '    throw new BadValue("a 64-bit integer", v);\n'
            "  }"
        )
    elif kind.kind == "float":
        body = (
            'if (typeof v !== "number") throw new BadValue("a number", v);\n'
            '  put(Object.is(v, -0) ? "-0.0" : String(v));  // NaN and Infinity as those words'
        )
    elif kind.kind == "string":
        body = 'if (typeof v !== "string") throw new BadValue("a string", v);\n  put(JSON.stringify(v));'
    elif kind.kind == "bool":
        body = 'if (typeof v !== "boolean") throw new BadValue("true or false", v);\n  put(v ? "true" : "false");'
    elif kind.kind == "list":
        item = _writer(kind.item, out)  # type: ignore[arg-type]
        body = (
            'if (!Array.isArray(v) && !types.isTypedArray(v)) throw new BadValue("an array", v);\n'
            "  let i = 0;\n"
            '  put("[");\n'
            "  try {\n"
            "    for (; i < v.length; i++) {\n"
            '      if (i) put(",");\n'
            f"      {item}(v[i]);\n"
            "    }\n"
            "  } catch (err) {\n"
            "    if (err instanceof BadValue) err.path = `[${i}]` + err.path;\n"
            "    throw err;\n"
            "  }\n"
            '  put("]");'
        )
    elif kind.kind == "map":
        item = _writer(kind.item, out)  # type: ignore[arg-type]
        body = (
            "const entries = mapEntries(v);\n"
            "  let key;\n"
            '  put("{");\n'
            "  try {\n"
            "    for (let i = 0; i < entries.length; i++) {\n"
            "      key = entries[i][0];\n"
            '      put((i ? "," : "") + JSON.stringify(key) + ":");\n'
            f"      {item}(entries[i][1]);\n"
            "    }\n"
            "  } catch (err) {\n"
            "    if (err instanceof BadValue) err.path = `[${JSON.stringify(key)}]` + err.path;\n"
            "    throw err;\n"
            "  }\n"
            '  put("}");'
        )
    else:  # optional
        item = _writer(kind.item, out)  # type: ignore[arg-type]
        body = f'if (v === null || v === undefined) put("null");\n  else {item}(v);'
    out[name] = f"function {name}(v) {{\n  {body}\n}}"
    return name


class JavaScript(Language):
    id: ClassVar[str] = "javascript"
    name: ClassVar[str] = "JavaScript"
    ace_mode: ClassVar[str] = "ace/mode/javascript"
    answer_file: ClassVar[str] = "answer.js"
    version_argv: ClassVar[tuple[str, ...]] = ("/usr/bin/node", "--version")

    compiled: ClassVar[bool] = False
    cpu_factor: ClassVar[float] = 1.0
    cpu_extra_s: ClassVar[float] = 0.3  # node starts in ~0.07 s of CPU; the harness adds ~0.01 s
    memory_rlimit: ClassVar[str] = "data"  # V8 reserves far more address space than it uses
    memory_extra_mb: ClassVar[int] = 192  # node itself, the young generation, code space
    processes: ClassVar[int] = 16  # node's main thread and V8's platform workers

    def entry_point(self, signature: Signature) -> str:
        params = ", ".join(camel(p.name) for p in signature.params)
        return f"function {self.entry_name(signature)}({params})"

    def starter(self, signature: Signature) -> str:
        lines = ["/**", f" * {signature.summary.replace('*/', '* /')}", " *"]
        lines += [f" * @param {{{js_type(p.type)}}} {camel(p.name)}" for p in signature.params]
        lines += [f" * @returns {{{js_type(signature.returns)}}}", " */"]
        return "\n".join(lines) + f"\n{self.entry_point(signature)} {{\n\n}}\n"

    def harness(self, signature: Signature) -> str:
        readers: dict[str, str] = {}
        args = ", ".join(f"{_reader(p.type, readers)}()" for p in signature.params)
        writers: dict[str, str] = {}
        write_return = _writer(signature.returns, writers)
        values = {
            "FUNCTION": f'"{self.entry_name(signature)}"',
            "READERS": "\n\n".join(readers.values()),
            "ARGS": args,
            "WRITERS": "\n\n".join(writers.values()),
            "WRITE_RETURN": write_return,
        }
        return fill(HARNESS_FILE, values)

    def sources(self, signature: Signature, answer: str) -> dict[str, str]:
        return {self.answer_file: answer, HARNESS_FILE: self.harness(signature)}

    def compile_argv(self, box: str) -> list[str]:
        raise NotImplementedError("JavaScript has no compile step: the harness compiles the answer")

    def executable(self, box: str) -> str:
        return os.path.realpath(NODE)

    def run_argv(self, box: str, memory_mb: int) -> list[str]:
        return [self.executable(box), f"--max-old-space-size={memory_mb}", os.path.join(box, HARNESS_FILE)]

    def compile_error(self, output: str, answer: str) -> tuple[str, int | None, int | None]:
        """Node's SyntaxError report (the harness's load_error, or `node --check answer.js`)."""
        for match in _SYNTAX_ERROR.finditer(output):
            if match.group("file").endswith(self.answer_file):
                line = int(match.group("line")) - self.answer_offset(answer)
                column = len(match.group("indent")) + 1 if match.group("marks") else None
                return match.group("msg").strip(), line if line > 0 else None, column
        lines = [line.strip() for line in output.splitlines() if line.strip()]
        return (lines[0] if lines else "node failed without saying why"), None, None

    def crash_reason(self, stderr: str) -> str | None:
        return "memory" if any(words in stderr for words in _OUT_OF_MEMORY) else None
