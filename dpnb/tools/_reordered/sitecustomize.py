"""Started with every Python process of the ``reordered`` configuration (``dpnb.tools.portability``).

This folder is put first on ``PYTHONPATH`` by that configuration only; the module installs
:func:`dpnb.tools.portability.install_reordering` and nothing else.
"""

from dpnb.tools.portability import install_reordering

install_reordering()
