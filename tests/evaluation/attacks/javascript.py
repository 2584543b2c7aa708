"""JavaScript answers to `sum-of-list` for the shared attack suite: each returns 0 when the
attack was blocked and a non-zero number when it got through (or never returns).

Under the harness an answer runs in a bare `vm` context: no `require`, no `process`. So every
attack that needs Node's own APIs first looks for them (`NODE`): in scope when the text runs
as a plain script (`node -e`, outside any sandbox), else through the known ways out of a vm
context (a host object's Function constructor, a caller, a stack frame's receiver). When none
works, the attack cannot be expressed inside the harness at all and returns 0: blocked by the
vm context before the box's own layers are even tried. `memory` and `cpu_forever` need no API
and run the same everywhere; `output_flood` prints through the captured console when it has
nothing better.
"""

from __future__ import annotations

# Defines node(): Node's `require`, or null when this answer cannot reach it.
NODE = r"""
function node() {
  if (typeof require === "function") return require;
  const self = this;
  const ways = [
    () => self.constructor.constructor("return process")(),
    () => console.log.constructor("return process")(),
    () => Object.getPrototypeOf(console).constructor.constructor("return process")(),
    () => sumOfList.caller.constructor("return process")(),
    () => {
      // The receivers and functions of the frames that called this answer (host frames).
      const saved = Error.prepareStackTrace;
      let sites = [];
      Error.prepareStackTrace = (error, frames) => frames;
      try {
        sites = new Error().stack;
      } finally {
        Error.prepareStackTrace = saved;
      }
      for (const site of sites) {
        for (const thing of [site.getThis?.(), site.getFunction?.()]) {
          try {
            const found = thing && thing.constructor.constructor("return process")();
            if (found && found.versions) return found;
          } catch (error) {}
        }
      }
      return undefined;
    },
  ];
  for (const way of ways) {
    try {
      const found = way();
      if (found && found.mainModule && typeof found.mainModule.require === "function") {
        return (id) => found.mainModule.require(id);
      }
    } catch (error) {}
  }
  return null;
}
"""


def _answer(body: str) -> str:
    return NODE + "\nfunction sumOfList(numbers) {\n" + body.strip("\n") + "\n}\n"


ATTACKS: dict[str, str] = {
    "network": _answer(r"""
  const require = node();
  if (!require) return 0;
  // net is asynchronous: a worker thread connects while this thread waits on shared memory.
  const { Worker } = require("worker_threads");
  const targets = [
    { host: "127.0.0.1", port: 5432 },
    { host: "127.0.0.1", port: 6379 },
    { path: "/var/run/postgresql/.s.PGSQL.5432" },
  ];
  const state = new Int32Array(new SharedArrayBuffer(8)); // [connected, finished]
  let worker;
  try {
    worker = new Worker(
      `const { workerData } = require("worker_threads");
      const net = require("net");
      const state = new Int32Array(workerData.buffer);
      for (const target of workerData.targets) {
        const socket = net.connect(target);
        const finish = (connected) => {
          if (connected) Atomics.add(state, 0, 1);
          Atomics.add(state, 1, 1);
          Atomics.notify(state, 1);
          socket.destroy();
        };
        socket.setTimeout(2000, () => finish(false));
        socket.once("connect", () => finish(true));
        socket.once("error", () => finish(false));
      }`,
      { eval: true, workerData: { buffer: state.buffer, targets } },
    );
  } catch (error) {
    return 0;
  }
  const deadline = Date.now() + 5000;
  while (Atomics.load(state, 1) < targets.length && Date.now() < deadline) {
    Atomics.wait(state, 1, Atomics.load(state, 1), 100);
  }
  worker.terminate();
  return Atomics.load(state, 0) > 0 ? 1 : 0;
"""),
    "write_outside": _answer(r"""
  const require = node();
  if (!require) return 0;
  const fs = require("fs");
  const name = "js-attack-" + Date.now() + "-" + Math.random().toString(16).slice(2);
  let written = 0;
  for (const dir of ["/tmp/../work", "/var/tmp", "/dev/shm", "/etc", "/usr", "."]) {
    const file = dir + "/" + name;
    try {
      fs.writeFileSync(file, "x", { flag: "wx" });
      written++;
      fs.unlinkSync(file); // leave nothing behind when it got through
    } catch (error) {}
  }
  return written;
"""),
    "read_outside": _answer(r"""
  const require = node();
  if (!require) return 0;
  const fs = require("fs");
  const files = [
    "/etc/passwd",
    "/etc/hostname",
    "/proc/self/environ",
    "/proc/1/cmdline",
    "/work/main/interviewprep/settings.py",
    "/root/.bashrc",
  ];
  let read = 0;
  for (const file of files) {
    try {
      fs.readFileSync(file);
      read++;
    } catch (error) {}
  }
  try {
    fs.readdirSync("/var/tmp");
    read++;
  } catch (error) {}
  return read;
"""),
    "fork_bomb": _answer(r"""
  const require = node();
  if (!require) return 0;
  const { spawn } = require("child_process");
  // spawn() forks and execs before it returns: a child that started has a pid.
  let started = 0;
  for (let i = 0; i < 1000; i++) {
    try {
      const child = spawn(require("process").execPath, ["-e", "for (;;) {}"], { stdio: "ignore", detached: true });
      child.on("error", () => {});
      if (child.pid !== undefined) started++;
    } catch (error) {}
  }
  return started;
"""),
    "memory": _answer(r"""
  // 4 GiB in 256 MiB buffers, every page written; needs no API.
  const blocks = [];
  for (let i = 0; i < 16; i++) {
    const block = new Uint8Array(256 << 20);
    for (let page = 0; page < block.length; page += 4096) block[page] = 1;
    blocks.push(block);
  }
  return blocks.length === 16 ? 1 : 0;
"""),
    "output_flood": _answer(r"""
  // 1 GiB: straight to fd 1 when Node's fs is reachable, else through the console.
  const require = node();
  const chunk = "x".repeat((1 << 20) - 1);
  const write = require ? (text) => require("fs").writeSync(1, text + "\n") : (text) => console.log(text);
  for (let i = 0; i < 1024; i++) write(chunk);
  return 1;
"""),
    "cpu_forever": _answer(r"""
  let spins = 0;
  for (;;) spins++;
"""),
    "signal_worker": _answer(r"""
  const require = node();
  if (!require) return 0;
  const process = require("process");
  let delivered = 0;
  for (const pid of [-1, process.ppid, 1]) {
    try {
      process.kill(pid, "SIGKILL");
      delivered++;
    } catch (error) {}
  }
  return delivered > 0 ? 1 : 0;
"""),
    "env_secrets": _answer(r"""
  const require = node();
  if (!require) return 0;
  const names = Object.keys(require("process").env);
  return names.filter((name) => /SECRET|DATABASE|REDIS|PASSWORD|KEY|TOKEN/i.test(name)).length;
"""),
    "exec_shell": _answer(r"""
  const require = node();
  if (!require) return 0;
  const { execFileSync } = require("child_process");
  for (const [file, args] of [["/bin/sh", ["-c", "echo x"]], ["/usr/bin/id", []]]) {
    try {
      if (String(execFileSync(file, args, { timeout: 5000 })).length > 0) return 1;
    } catch (error) {}
  }
  return 0;
"""),
}
