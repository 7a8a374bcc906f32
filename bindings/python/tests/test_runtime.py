"""The shared async runtime through `_native._sleep` (private): the GIL is released
while a call waits, Ctrl-C interrupts it, a forked child gets a runtime of its own."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from svc_sdk import _native


def test_other_threads_run_while_waiting() -> None:
    ticks = 0
    stop = threading.Event()

    def count() -> None:
        nonlocal ticks
        while not stop.is_set():
            ticks += 1
            time.sleep(0.001)

    thread = threading.Thread(target=count)
    thread.start()
    try:
        start = time.monotonic()
        _native._sleep(0.3)
        elapsed = time.monotonic() - start
    finally:
        stop.set()
        thread.join()
    assert 0.29 <= elapsed < 2.0
    # With the GIL held the other thread could not have run at all meanwhile.
    assert ticks > 50


def test_threads_wait_concurrently() -> None:
    threads = [threading.Thread(target=_native._sleep, args=(0.3,)) for _ in range(4)]
    start = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert time.monotonic() - start < 1.0


CHILD = """
import sys, time
from svc_sdk import _native
print("ready", flush=True)
try:
    _native._sleep(30)
except KeyboardInterrupt:
    print("interrupted", flush=True)
    sys.exit(0)
print("not interrupted", flush=True)
sys.exit(1)
"""


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_interrupts_within_a_second() -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD], stdout=subprocess.PIPE, text=True,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "ready"
        time.sleep(0.3)  # Inside the wait.
        sent = time.monotonic()
        child.send_signal(signal.SIGINT)
        line = child.stdout.readline().strip()
        elapsed = time.monotonic() - sent
        assert line == "interrupted"
        assert elapsed < 1.0, elapsed
        assert child.wait(timeout=5) == 0
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork")
def test_a_forked_child_gets_its_own_runtime() -> None:
    _native._sleep(0.01)  # The parent's runtime exists, with its threads.
    pid = os.fork()
    if pid == 0:  # The child: the parent's runtime threads are not here.
        try:
            _native._sleep(0.01)
            os._exit(0)
        except BaseException:
            os._exit(1)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            assert os.waitstatus_to_exitcode(status) == 0
            break
        time.sleep(0.01)
    else:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        pytest.fail("the forked child hung in the runtime")
    _native._sleep(0.01)  # And the parent's still works.


def test_bad_durations() -> None:
    for seconds in [-1.0, float("nan"), float("inf"), 1e30]:
        with pytest.raises(ValueError):
            _native._sleep(seconds)
