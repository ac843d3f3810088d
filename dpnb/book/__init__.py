"""What the chapters share beyond the science: claims tables, report formatting, intervals and the
tie rule, the notebooks' parameter checks, and the comparison chapter's tasks.
"""
