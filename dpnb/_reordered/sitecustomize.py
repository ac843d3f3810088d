"""Started with every Python process of the ``reordered`` configuration (``dpnb.portability``).

This folder is put first on ``PYTHONPATH`` by that configuration only; the module installs
:func:`dpnb.portability.install_reordering` and nothing else.
"""

from dpnb.portability import install_reordering

install_reordering()
