"""Speed and memory benchmarks (``make benchmark``); never part of ``make test``.

Each ``benchmarks/bench_<topic>.py`` defines ``CASES``: a dict mapping a case name to a
zero-argument callable that does one unit of work. The runner times each case (best of
``--repeat`` runs, wall clock) and measures its peak Python-heap allocation with tracemalloc.
"""
