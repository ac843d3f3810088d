"""Tools on the top floor: ``make run`` (:mod:`.run`), parameter sweeps (:mod:`.sweep`, with their grids
:mod:`.grid` and record store :mod:`.records`), the Jupytext pairs (:mod:`.pairing`) and emulated other
machines (:mod:`.portability`), all executing notebooks through the one executor (:mod:`.executor`).

Tools import the science; nothing scientific imports a tool (a floor below that can run its points on a
sweep takes the runner from its caller, e.g. ``comparison.run_grid(sweep={"runner": sweep_records, ...})``).
"""
