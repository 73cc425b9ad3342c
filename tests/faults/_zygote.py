"""Fork server for the crash and kill suites: ``python -m tests.faults._zygote``.

It imports the journal package once, then forks one child per request, so a crash state costs a
``fork`` instead of an interpreter start (hundreds of crash states and kills fit in CI's time).
It is single-threaded, which is what makes forking it safe. Requests and replies are JSON lines on
stdin/stdout:

* ``{"op": "crash", "scenario", "root", "point", "side"}`` → fork a child that installs a
  :class:`~tests.faults.crashkit.CrashHook`, runs the scenario (or ``"recovery"``) and dies at the
  point; reply ``{"code"}`` once it is reaped.
* ``{"op": "writer", "root", "ack_fd", "seed"}`` → fork a kill-soak writer; reply ``{"pid"}``
  immediately (the parent kills it).
* ``{"op": "reap", "pid"}`` → wait for that child; reply ``{"code"}``.
* ``{"op": "quit"}`` or end of input → exit.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from pathlib import Path
from typing import Any, NoReturn

from journal import fs
from tests.faults import crashkit, scenarios


def _reply(obj: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def _crash_child(msg: dict[str, Any]) -> NoReturn:
    code = crashkit.EXIT_ERROR
    try:
        point = crashkit.CrashPoint(**msg["point"])
        side = crashkit.SideChannel(msg["side"])
        fs.set_fault_hook(crashkit.CrashHook(point, msg["root"], side))
        name = msg["scenario"]
        run = scenarios.run_recovery if name == "recovery" else scenarios.SCENARIOS[name].run
        run(Path(msg["root"]), side.note)
        code = crashkit.EXIT_FINISHED
    except BaseException:
        traceback.print_exc()
        sys.stderr.flush()
    finally:
        os._exit(code)


def _writer_child(msg: dict[str, Any]) -> NoReturn:
    code = crashkit.EXIT_ERROR
    try:
        crashkit.writer_main(msg["root"], msg["ack_fd"], msg["seed"])
        code = 0
    except BaseException:
        traceback.print_exc()
        sys.stderr.flush()
    finally:
        os._exit(code)


def main() -> None:
    for line in sys.stdin:
        msg = json.loads(line)
        op = msg["op"]
        if op == "quit":
            break
        if op == "crash":
            pid = os.fork()
            if pid == 0:
                _crash_child(msg)
            _, status = os.waitpid(pid, 0)
            _reply({"code": os.waitstatus_to_exitcode(status)})
        elif op == "writer":
            pid = os.fork()
            if pid == 0:
                _writer_child(msg)
            _reply({"pid": pid})
        elif op == "reap":
            _, status = os.waitpid(msg["pid"], 0)
            _reply({"code": os.waitstatus_to_exitcode(status)})
        else:
            _reply({"error": f"unknown op {op!r}"})


if __name__ == "__main__":
    main()
