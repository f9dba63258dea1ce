"""Whole-robot identification: stacked projected regressors, LS/WLS/IRLS/SDP solvers with
physical consistency, and validation on held-out runs.

References: Zhang, Haugk, Vasudevan, "System Identification For Constrained Robots" (seed 001).
"""
