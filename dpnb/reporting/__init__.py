"""What the chapters share beyond the science: claims tables, report formatting, the
notebooks' parameter checks, and the comparison chapter's tasks and CPU-time budgets.
"""
