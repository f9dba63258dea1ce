"""Estimators of a parameter vector from rows ``A x = b`` of linear measurement models.

- :mod:`.rls`: recursive least squares (streaming, covariance form).
- :mod:`.batch`: weighted batch least squares (accumulated normal equations).
- :mod:`.consistent`: the physically consistent estimate nearest to a least-squares one (SDP).
- :mod:`.bounds`: guaranteed per-parameter intervals for the bounded-noise model (LPs);
  :mod:`.interrupt`: giving an update of them up between two LPs.
- :mod:`.payload`: the combination the per-sample row methods run (rls, lmi, pmd, guaranteed on wrench rows).
- :mod:`.guaranteed`, :mod:`.log_cholesky`: the momentum-window estimators.
- :mod:`.sound_floor`, :mod:`.run_floor`: the width no box sound under the stated bounds beats on a run's rows.
- :mod:`.protocol`: the one interface every method's estimator offers, and the registry by name.
- :mod:`.factory`: the registered methods; :mod:`.intake`: the checks every message passes first.
"""
