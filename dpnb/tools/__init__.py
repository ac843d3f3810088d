"""Tools on the top floor: ``make run`` (:mod:`.run`), parameter sweeps (:mod:`.sweep`), the
Jupytext pairs (:mod:`.pairing`) and emulated other machines (:mod:`.portability`).

Tools import the science; nothing scientific imports a tool.
"""
