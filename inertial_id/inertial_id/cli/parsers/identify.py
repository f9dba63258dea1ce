"""``inertial-id identify``: whole-robot identification (link inertials, rotor inertia, friction) from
recorded run folders, open or closed chains, optionally physically consistent (SDP).

With the default lmi method the estimate is also plausible: each link's mass stays within its
stated bounds (F = 2 times the nominal mass either way, --mass-factor) and inside a bounding
ellipsoid derived from the model, and each link is pulled toward its nominal (CAD) inertials by the
entropic divergence of pseudo-inertias, with the weight chosen on held-out parts of the --data runs.
The link table marks what the data do not determine alone."""
from __future__ import annotations

import argparse

from ...defaults import DEFAULT_LMI_MARGIN, DEFAULT_MASS_FACTOR, DEFAULT_SOLVER, SOLVERS
from . import add_json_option


def register(sub) -> None:
    p = sub.add_parser("identify", help="identify the full dynamic model from recorded runs",
                       description=__doc__)
    p.add_argument("--model", required=True, help="robot profile name, profile YAML or URDF path")
    p.add_argument("--data", nargs="+", required=True, metavar="RUN",
                   help="run folders (t.csv, q.csv, qd.csv, tau.csv, optional qdd.csv)")
    p.add_argument("--validate", nargs="+", default=[], metavar="RUN", help="held-out run folders")
    p.add_argument("--friction", action="store_true",
                   help="identify [Fc, Fv, Ia, beta] per actuated joint too")
    p.add_argument("--fixed", nargs="+", default=[], metavar="GROUP",
                   help="hold these parameter groups at their nominal values: inertial, friction, "
                        "Fc, Fv, Ia, beta, a body (link) name or a joint name")
    p.add_argument("--method", choices=SOLVERS, default=DEFAULT_SOLVER,
                   help="ls, wls (per-joint weights), irls (Huber reweighting) or lmi (SDP, "
                        "physically consistent; default)")
    p.add_argument("--lmi-margin", type=float, default=DEFAULT_LMI_MARGIN,
                   help="pseudo-inertia >= margin * I (kg m^2)")
    p.add_argument("--regularization", choices=("entropic", "none"), default=None,
                   help="lmi only: pull each link toward its nominal (CAD) inertials by the entropic "
                        "(log-det) divergence of pseudo-inertias (default: entropic; none: plain SDP)")
    p.add_argument("--weight", default="auto", metavar="W|auto",
                   help="weight of the divergence, in units of the chi-square of the torque fit; "
                        "auto (default): chosen on held-out parts of the --data runs (never --validate)")
    # --ellipsoids: this option's name before the mass bounds joined the ellipsoids
    p.add_argument("--bounds", "--ellipsoids", action=argparse.BooleanOptionalAction, default=None,
                   help="lmi only: keep each link's mass within [m0/F, F*m0] of its nominal mass m0 and "
                        "inside a bounding ellipsoid derived from the model (default: on with lmi)")
    p.add_argument("--mass-factor", type=float, default=None, metavar="F",
                   help=f"factor F of the mass bounds (default {DEFAULT_MASS_FACTOR:g}; > 1)")
    p.add_argument("--friction-support", action="store_true",
                   help="with --friction: held-out error without each friction term, on the --data runs")
    p.add_argument("--cutoff-hz", type=float, default=None,
                   help="zero-phase Butterworth low-pass on qd, qdd, tau (default: none)")
    p.add_argument("--filter-order", type=int, default=4)
    p.add_argument("--downsample", type=int, default=1, help="keep every N-th sample after filtering")
    p.add_argument("--differentiate", action="store_true",
                   help="recompute qdd from qd by central differences even if qdd.csv exists")
    p.add_argument("--simulate", action="store_true",
                   help="also report the forward-simulation L2 metric (0.5 s segments) on held-out runs")
    add_json_option(p)
    p.set_defaults(handler="identify.run")
