"""Estimators of a parameter vector from rows ``A x = b`` of linear measurement models.

- :mod:`.rls`: recursive least squares (streaming, covariance form).
- :mod:`.batch`: weighted batch least squares (accumulated normal equations).
- :mod:`.consistent`: the physically consistent estimate nearest to a least-squares one (SDP).
- :mod:`.bounds`: guaranteed per-parameter intervals for the bounded-noise model (LPs).
- :mod:`.payload`: the combination the estimator node runs, selected by method name.
"""
