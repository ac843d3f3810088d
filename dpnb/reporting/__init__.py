"""What the chapters share beyond the science: claims tables and the verdict policy, report
formatting, the notebooks' parameter checks, exercises, and CPU-time budgets.
"""
