"""Numerics: small linear algebra, confidence intervals, results with their intervals and the tie
rule, the one-pass Gram matrix, Bingham sampling and utility metrics. No privacy accounting here;
these modules stand on :mod:`dpnb.ground`.
"""
