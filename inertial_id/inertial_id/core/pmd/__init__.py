"""Fast object identification at low SNR by point-mass discretization (Nadeau et al.).

shapes: payload shapes and the lattice points inside them; samples: wrist kinematics + wrench and
their regressors; solver: Problem 1 (SOCP); baselines: OLS, RTLS, GEO; kalman: rates from the F/T
frame pose (causal filter; smoother for a batch); objects: the eight test objects; metrics:
eqs. 10-12; study: the simulation study; estimator: the ``pmd`` method of the estimator node.

References: Nadeau, Giamou, Kelly, "Fast Object Inertial Parameter Identification for Collaborative Robots" (seed 004).
"""
