"""A child process with a chosen shutdown behaviour, for the stdio launcher's tests.

``python child.py MODE``. Every mode first writes one JSON line ``{"ready": {...}}`` to
stdout once its signal dispositions are in place, so a test never races its set-up.

* ``polite``    exits 0 when stdin reaches end-of-file;
* ``deaf``      ignores end-of-file and waits for a signal;
* ``stubborn``  ignores end-of-file and SIGTERM (only SIGKILL ends it);
* ``parent``    starts a grandchild that sleeps (in the same process group, holding the
  same stdout and stderr), reports its pid, then behaves like ``polite``;
* ``escapee``   the same, but the grandchild leaves the process group (its own session);
* ``env``       reports its environment, then behaves like ``polite``;
* ``stderr``    writes stderr lines (one of 1 MiB, one not UTF-8), then like ``polite``;
* ``burst``     writes 1,000 lines and exits at once without reading stdin.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from typing import Any


def say(message: Any) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def until_eof() -> None:
    while sys.stdin.buffer.read(65536):
        pass


def forever() -> None:
    while True:
        time.sleep(3600)


def main(mode: str) -> None:
    ready: dict[str, Any] = {"pid": os.getpid()}
    if mode == "stubborn":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    elif mode in ("parent", "escapee"):
        grandchild = subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(60)"],
            stdin=subprocess.DEVNULL,
            start_new_session=mode == "escapee",
        )
        ready["grandchild"] = grandchild.pid
    elif mode == "env":
        ready["env"] = dict(os.environ)
    elif mode == "stderr":
        os.write(2, b"first line\n")
        os.write(2, b"x" * (1 << 20) + b"\n")
        os.write(2, b"caf\xe9 is not UTF-8\n")
        os.write(2, b"last line\n")
    elif mode == "burst":
        for n in range(1000):
            say({"n": n})
        return
    say({"ready": ready})
    if mode in ("deaf", "stubborn"):
        forever()
    until_eof()


if __name__ == "__main__":
    main(sys.argv[1])
