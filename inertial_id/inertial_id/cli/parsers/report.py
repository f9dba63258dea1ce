"""``inertial-id report RUN.json|BAG --out DIR``: an index.html (robot, payload frame, outcome,
planner outcome, final intervals with units and truth inside/outside) and PNG plots of a run: bounds
over time per parameter, residuals over their bound, condition number, joint trajectories and
measured torques against the limits, planner margins while executing (each when the input has the
data). A bag is read with the profile ``--robot``; a JSON result of ``demo`` or ``estimate`` gives
the bounds and the history it holds."""
from __future__ import annotations


def register(sub) -> None:
    p = sub.add_parser("report", help="plots and index.html of a run (JSON result or bag)", description=__doc__)
    p.add_argument("run", metavar="RUN.json|BAG", help="result JSON of demo/estimate, or a rosbag2 folder")
    p.add_argument("--out", required=True, metavar="DIR", help="folder for the PNGs and index.html")
    p.add_argument("--robot", default="kinova_gen3", help="profile of a bag (limits, estimator)")
    p.add_argument("--method", default=None, help="estimator for a bag without recorded estimates")
    p.set_defaults(handler="report.run")
