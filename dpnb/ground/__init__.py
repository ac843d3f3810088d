"""Ground floor: input validation, random streams, the compiled kernels and the offline datasets.

Everything above stands on these modules; they import nothing else of dpnb but each other.
"""
