"""Privacy: the noise mechanisms (floating-point and exact), the empirical audits with every
neighbour relation, and the contract every private estimator follows. Stands on the ground and
numerics wings; knows nothing of any one paper.
"""
