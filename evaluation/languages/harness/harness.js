// Generated for one question: runs answer.js on the tests read from stdin (see javascript.py).
"use strict";
const fs = require("fs");
const path = require("path");
const util = require("util");
const vm = require("vm");
const { performance } = require("perf_hooks");
const types = util.types;

const ANSWER_FILE = "answer.js";
const FUNCTION = @FUNCTION@;
const EXCERPT_CHARS = @EXCERPT_CHARS@;
const PRINT_LIMIT_CHARS = @PRINT_LIMIT@;
const VALUE_LIMIT_CHARS = @VALUE_LIMIT@;

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
    if (capture(args)) throw new RangeError("printed more than the output limit (@PRINT_LIMIT_MIB@ MiB)");
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
      else if (err instanceof TooLarge) [status, message] = ["output", "the return value is larger than @VALUE_LIMIT_MIB@ MiB"];
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
