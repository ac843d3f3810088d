import pytest

from dpnb.reporting import budget


def _square(x):
    return x * x


def _spin(seconds):
    import time

    end = time.process_time() + seconds
    while time.process_time() < end:
        pass
    return seconds


def _sleep_long(x):
    import time

    time.sleep(30)
    return x


def _raise(x):
    raise ValueError(f"bad input {x}")


def test_budget_runner_returns_value_times_out_and_reports_errors():
    assert budget.run_with_budget(_square, (3,), 10.0) == 9
    late = budget.run_with_budget(_spin, (30.0,), 0.5)
    assert isinstance(late, budget.Unfinished) and str(late) == "did not finish within 0.5 s"
    hung = budget.run_with_budget(_sleep_long, (1,), 0.1)  # no CPU used: stopped after WALL_FACTOR x 0.1 s
    assert isinstance(hung, budget.Unfinished) and str(hung) == "did not finish within 0.1 s"
    failed = budget.run_with_budget(_raise, (2,), 10.0)
    assert isinstance(failed, budget.Unfinished) and str(failed) == "failed: ValueError: bad input 2"
    import multiprocessing

    assert multiprocessing.active_children() == []  # every child is gone


def _imported(name):
    import sys

    return name in sys.modules


def test_budget_runner_imports_preload_before_the_budget():
    assert budget.run_with_budget(_imported, ("colorsys",), 10.0) is False
    assert budget.run_with_budget(_imported, ("colorsys",), 10.0, preload=("colorsys",)) is True
    missing = budget.run_with_budget(_square, (3,), 10.0, preload=("no_such_module_here",))
    assert isinstance(missing, budget.Unfinished) and str(missing).startswith("failed: ModuleNotFoundError")


def test_budget_runner_takes_the_message_of_a_child_already_gone():
    """A child that fails at once can exit (and be reaped by the forkserver) before its CPU time is first read."""
    import multiprocessing
    import subprocess
    import sys

    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    receiver, sender = multiprocessing.Pipe(duplex=False)
    sender.send(("error", "failed: ModuleNotFoundError: x"))
    sender.close()
    assert budget._wait(receiver, gone.pid, 10.0) == ("error", "failed: ModuleNotFoundError: x")
    receiver.close()


def test_time_budget_skips_larger_epsilons_after_running_out():
    limit = budget.TimeBudget(0.5)
    # a fit that spins runs out of its CPU budget after 0.5 s (a sleeping one would hold the worker for the
    # 10 x 0.5 s wall cap, which test_budget_runner_returns_value_times_out_and_reports_errors covers)
    first = limit.run("slow", 100, 1.0, _spin, 30.0)
    assert isinstance(first, budget.Unfinished)
    assert limit.run("slow", 100, 2.0, _square, 2) is first  # not started: same n, larger epsilon
    assert limit.run("slow", 100, 0.5, _square, 2) == 4  # smaller epsilon still runs
    assert limit.run("slow", 50, 2.0, _square, 2) == 4  # another n still runs
    with pytest.raises(ValueError):
        budget.TimeBudget(0.0)
