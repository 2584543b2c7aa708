"""JavaScript (Node.js): the answer is evaluated by a generated `harness.js` with the `vm` module.

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
from evaluation.languages.types import Signature, Type, camel

NODE = "/usr/bin/node"
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


HARNESS = r"""// Generated for one question: runs answer.js on the tests read from stdin (see javascript.py).
"use strict";
const fs = require("fs");
const path = require("path");
const util = require("util");
const vm = require("vm");
const { performance } = require("perf_hooks");
const types = util.types;

const ANSWER_FILE = "answer.js";
const FUNCTION = @FUNCTION@;
const EXCERPT_CHARS = 1024;
const PRINT_LIMIT_CHARS = 1 << 20;
const VALUE_LIMIT_CHARS = 1 << 20;

// ---- the result channel: fd 1, written only here (the answer's console is captured) ----

function writeAll(fd, text) {
  const bytes = Buffer.from(text, "utf8");
  for (let done = 0; done < bytes.length; ) {
    try {
      done += fs.writeSync(fd, bytes, done);
    } catch (err) {
      if (err.code !== "EAGAIN") throw err;
      pause();
    }
  }
}

function pause() {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
}

// U+0085, U+2028 and U+2029 escaped too: a reader splitting text into lines splits at them.
function emit(fields) {
  const line = "{" + fields.map(([key, value]) => `"${key}":${value}`).join(",") + "}";
  const escape = (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0");
  writeAll(1, line.replace(/[\u0085\u2028\u2029]/g, escape) + "\n");
}

function text(value) {
  return JSON.stringify(String(value).slice(0, EXCERPT_CHARS));
}

// ---- stdin: line 1 the shown tests, line 2 (sent once they have reported) the hidden ones ----

let pending = "";

function readLine() {
  const chunk = Buffer.alloc(1 << 16);
  for (;;) {
    const end = pending.indexOf("\n");
    if (end >= 0) {
      const line = pending.slice(0, end);
      pending = pending.slice(end + 1);
      return line;
    }
    let count;
    try {
      count = fs.readSync(0, chunk, 0, chunk.length, null);
    } catch (err) {
      if (err.code === "EAGAIN") {
        pause();
        continue;
      }
      if (err.code === "EOF") count = 0;
      else throw err;
    }
    if (count === 0) {
      const line = pending;
      pending = "";
      return line.trim() ? line : null;
    }
    pending += chunk.toString("latin1", 0, count);  // the lines are ASCII tokens
  }
}

// Each test's arguments as JSON text, parsed again in the test's own context so that its
// arrays and objects belong to that context (instanceof Array holds; no host object leaks).
let tokens = [];
let at = 0;

function next() {
  return tokens[at++];
}

@READERS@

function readTests(line) {
  tokens = line.trim().split(" ");
  at = 0;
  const tests = [];
  for (let n = Number(next()); n > 0; n--) tests.push(JSON.stringify([@ARGS@]));
  return tests;
}

// ---- the return value, written by its declared type ----

class BadValue extends Error {
  constructor(expected, value) {
    super(expected);
    this.expected = expected;
    this.got = value;
    this.path = "";
  }
  describe() {
    let shown;
    try {
      shown = valueText(this.got);
    } catch {
      shown = "a value that cannot be shown";
    }
    return `the return value${this.path} is ${shown}, not ${this.expected}`;
  }
}

class TooLarge extends Error {}

function valueText(value) {
  if (value === undefined) return "undefined (is a return statement missing?)";
  const shown = util.inspect(value, { depth: 1, breakLength: Infinity, customInspect: false, maxArrayLength: 5 });
  return shown.length > 100 ? shown.slice(0, 99) + "…" : shown;
}

let parts = [];
let partsChars = 0;

function put(piece) {
  partsChars += piece.length;
  if (partsChars > VALUE_LIMIT_CHARS) throw new TooLarge();
  parts.push(piece);
}

function mapEntries(v) {
  if (types.isMap(v)) {
    const entries = [...Map.prototype.entries.call(v)];
    const bad = entries.find(([key]) => typeof key !== "string");
    if (bad) throw new BadValue("an object with text keys", v);
    return entries;
  }
  if (v === null || typeof v !== "object" || Array.isArray(v)) throw new BadValue("an object", v);
  return Object.keys(v).map((key) => [key, v[key]]);
}

@WRITERS@

function encodeReturn(value) {
  parts = [];
  partsChars = 0;
  try {
    @WRITE_RETURN@(value);
    return parts.join("");
  } finally {
    parts = [];
  }
}

// ---- what the answer prints: an excerpt per test, a cap on the whole run ----

const printed = { total: 0, excerpt: "", exceeded: false };

function beginTest() {
  printed.excerpt = "";
}

// Called by the context's console with the context's own array of arguments; true means
// the cap is reached (the context's console then throws its own RangeError).
function capture(args) {
  let line;
  try {
    line = util.formatWithOptions({ customInspect: false }, ...args) + "\n";
  } catch {
    line = "[unprintable]\n";
  }
  printed.total += line.length;
  if (printed.total > PRINT_LIMIT_CHARS) {
    printed.exceeded = true;
    return true;
  }
  if (printed.excerpt.length < EXCERPT_CHARS) printed.excerpt += line.slice(0, EXCERPT_CHARS - printed.excerpt.length);
  return false;
}

// Run first in every context, before the answer: a console whose methods are the context's
// own functions (the host's capture stays in a closure), and the context's JSON.parse.
const PRELUDE = new vm.Script(`(function (capture) {
  "use strict";
  const parse = JSON.parse;
  const say = (...args) => {
    if (capture(args)) throw new RangeError("printed more than the output limit (1 MiB)");
  };
  globalThis.console = { log: say, info: say, debug: say, warn: say, error: say, trace: say, dir: say, table: say };
  return parse;
})`, { filename: "harness-prelude.js" });
// A second script in the same context also sees the answer's top-level const and let.
const FIND = new vm.Script(`typeof ${FUNCTION} === "function" ? ${FUNCTION} : undefined`, {
  filename: "harness-find.js",
});

// ---- errors, in the answer's own lines ----

function answerPosition(err) {
  let stack;
  try {
    stack = err !== null && typeof err === "object" ? err.stack : undefined;
  } catch {
    return null;
  }
  if (typeof stack !== "string") return null;
  // The innermost frame in answer.js: "    at f (answer.js:3:9)" or "    at answer.js:3:9".
  const frame = /^ +at (?:.*\()?answer\.js:(\d+):(\d+)\)?$/m.exec(stack);
  return frame ? { line: Number(frame[1]), col: Number(frame[2]) } : null;
}

function errorText(err) {
  try {
    if (err !== null && typeof err === "object" && typeof err.message === "string") {
      const name = typeof err.name === "string" && err.name ? err.name : "Error";
      return (err.message ? `${name}: ${err.message}` : name).slice(0, EXCERPT_CHARS - 20);
    }
    return ("Uncaught " + util.inspect(err, { depth: 1, customInspect: false })).slice(0, EXCERPT_CHARS - 20);
  } catch {
    return "an exception that cannot be printed";
  }
}

function describe(err) {
  const position = answerPosition(err);
  return errorText(err) + (position ? ` (line ${position.line})` : "");
}

function isOutOfMemory(err) {
  try {
    return types.isNativeError(err) && err.name === "RangeError" && /allocation failed/i.test(err.message);
  } catch {
    return false;
  }
}

function failure(err) {
  if (printed.exceeded) return ["output", null];
  if (isOutOfMemory(err)) return ["memory", null];
  return ["error", describe(err)];
}

// ---- the runs ----

// The answer's top level in a context of its own; returns { fn, parse } or throws what it threw.
function freshAnswer(script) {
  const context = vm.createContext(Object.create(null));  // no host prototype on its global
  const parse = PRELUDE.runInContext(context)(capture);
  script.runInContext(context, { displayErrors: false });
  return { fn: FIND.runInContext(context), parse };
}

function load() {
  let source;
  try {
    source = fs.readFileSync(path.join(__dirname, ANSWER_FILE), "utf8");
  } catch (err) {
    emit([["e", '"load_error"'], ["kind", '"compile"'], ["msg", text("cannot read the answer: " + err.message)]]);
    return null;
  }
  let script;
  try {
    script = new vm.Script(source, { filename: ANSWER_FILE });
  } catch (err) {
    // "answer.js:LINE", the line's text, then carets under the offending token.
    // (No carets when the text ends too early: the line is then the one after the last.)
    const found = /^answer\.js:(\d+)\n.*\n([ \t]*)(\^?)/.exec(String(err.stack));
    const line = found ? found[1] : "null";
    const col = found && found[3] ? String(found[2].length + 1) : "null";
    const position = [["line", line], ["col", col]];
    emit([["e", '"load_error"'], ["kind", '"compile"'], ["msg", text(errorText(err))], ...position]);
    return null;
  }
  let answer;
  try {
    answer = freshAnswer(script);
  } catch (err) {
    const kind = printed.exceeded ? "output" : "exception";
    const message = printed.exceeded ? "printed more than the output limit" : errorText(err);
    const position = answerPosition(err);
    emit([
      ["e", '"load_error"'], ["kind", `"${kind}"`], ["msg", text(message)],
      ["line", position ? String(position.line) : "null"], ["col", position ? String(position.col) : "null"],
    ]);
    return null;
  }
  if (answer.fn === undefined) {
    emit([["e", '"load_error"'], ["kind", '"missing"']]);
    return null;
  }
  return { script, answer };
}

function runTest(index, args, script, answer, detailed) {
  const fields = [["e", '"test"'], ["i", String(index)]];
  let status = "ok";
  let message = null;
  let elapsed = 0;
  let value;
  beginTest();
  try {
    if (index > 0) {
      answer = freshAnswer(script);  // nothing carries over from the test before
      beginTest();  // the top level's prints belong to no test
      if (answer.fn === undefined) throw new ReferenceError(`${FUNCTION} is not defined when the answer runs again`);
    }
    const argv = answer.parse(args);
    const started = performance.now();
    try {
      value = Reflect.apply(answer.fn, undefined, argv);  // not the context's (patchable) iterator
    } finally {
      elapsed = performance.now() - started;
    }
  } catch (err) {
    [status, message] = failure(err);
  }
  if (printed.exceeded) status = "output";
  if (status === "ok") {
    try {
      fields.push(["v", encodeReturn(value)]);
    } catch (err) {
      if (err instanceof BadValue) [status, message] = ["badvalue", err.describe()];
      else if (err instanceof TooLarge) [status, message] = ["output", "the return value is larger than 1 MiB"];
      else [status, message] = ["badvalue", "the return value cannot be read: " + describe(err)];
    }
  }
  fields.push(["s", `"${status}"`], ["t", String(Math.round(elapsed * 100) / 100)]);
  if (detailed) {
    fields.push(["o", text(printed.excerpt)]);
    if (message !== null) fields.push(["msg", text(message)]);
  }
  emit(fields);
}

function main() {
  const shownLine = readLine();
  const loaded = load();
  if (loaded === null) return;
  emit([["e", '"loaded"']]);
  const shown = shownLine === null ? [] : readTests(shownLine);
  let index = 0;
  for (const args of shown) runTest(index++, args, loaded.script, loaded.answer, true);
  const hiddenLine = readLine();
  if (hiddenLine !== null) {
    fs.closeSync(0);
    for (const args of readTests(hiddenLine)) runTest(index++, args, loaded.script, loaded.answer, false);
  }
  emit([["e", '"done"']]);
}

try {
  main();
} catch (err) {
  emit([["e", '"harness_error"'], ["msg", text(describe(err))]]);
}
process.exit(0);  // promises the answer left behind never run
"""


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
        replacements = {
            "@FUNCTION@": f'"{self.entry_name(signature)}"',
            "@READERS@": "\n\n".join(readers.values()),
            "@ARGS@": args,
            "@WRITERS@": "\n\n".join(writers.values()),
            "@WRITE_RETURN@": write_return,
        }
        return re.sub("|".join(replacements), lambda match: replacements[match.group(0)], HARNESS)

    def sources(self, signature: Signature, answer: str) -> dict[str, str]:
        return {self.answer_file: answer, "harness.js": self.harness(signature)}

    def compile_argv(self, box: str) -> list[str]:
        raise NotImplementedError("JavaScript has no compile step: the harness compiles the answer")

    def executable(self, box: str) -> str:
        return os.path.realpath(NODE)

    def run_argv(self, box: str, memory_mb: int) -> list[str]:
        return [self.executable(box), f"--max-old-space-size={memory_mb}", os.path.join(box, "harness.js")]

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
