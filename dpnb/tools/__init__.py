"""Tools on the top floor: ``make run`` (:mod:`.run`), parameter sweeps (:mod:`.sweep`, with their grids
:mod:`.grid` and record store :mod:`.records`), the Jupytext pairs (:mod:`.pairing`) and emulated other
machines (:mod:`.portability`), all executing notebooks through the one executor (:mod:`.executor`).

Tools import the science; nothing scientific imports a tool (a floor below that runs points on a sweep
finds the sweep as the installed entry point ``dpnb.runners:sweep``).
"""
