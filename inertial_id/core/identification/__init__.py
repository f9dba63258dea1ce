"""Whole-robot identification (seed 001): stacked projected regressors, LS/WLS/IRLS/SDP solvers with
physical consistency, and validation on held-out runs."""
