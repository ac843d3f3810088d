"""Faults of dpnb.reporting.budget's CPU-time watch: a child that is gone before its first CPU-time lookup."""

import multiprocessing

import psutil
import pytest

from dpnb.reporting import budget


def _gone(pid):
    raise psutil.NoSuchProcess(pid)


def test_wait_child_gone_before_first_lookup(monkeypatch):
    """The child exited between "ready" and the first lookup: its message is still read, no NoSuchProcess escapes."""
    monkeypatch.setattr(budget, "_cpu_seconds", _gone)
    receiver, sender = multiprocessing.Pipe(duplex=False)
    sender.send(("ok", 7))
    sender.close()
    assert budget._wait(receiver, 2**22 + 1, 1.0) == ("ok", 7)
    receiver.close()


def test_wait_child_gone_without_message(monkeypatch):
    """Gone without a message: the end of the pipe (EOFError, which run_with_budget reports), not NoSuchProcess."""
    monkeypatch.setattr(budget, "_cpu_seconds", _gone)
    receiver, sender = multiprocessing.Pipe(duplex=False)
    sender.close()
    with pytest.raises(EOFError):
        budget._wait(receiver, 2**22 + 1, 1.0)
    receiver.close()
