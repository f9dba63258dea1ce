"""``inertial-id estimate --bag BAG``: the estimator pipeline offline on a recording, as fast as the
computer allows. Uses the recorded /regressor_samples when the bag has rows for the method (the
exact messages the live estimator folded in), else builds rows from /joint_states (and /wrench)
with the builder's core classes. Compares with the bag's last recorded estimate when it has one."""
from __future__ import annotations

from . import add_json_option, non_negative_float, positive_int


def register(sub) -> None:
    p = sub.add_parser("estimate", help="run the estimator offline on a rosbag2", description=__doc__)
    p.add_argument("--bag", required=True,
                   help="rosbag2 folder (MCAP or sqlite3), or a folder of such folders (a fleet: each bag "
                        "estimated on its own, in parallel; one JSON per bag in --out-dir and a summary table)")
    p.add_argument("--robot", default="kinova_gen3", help="robot profile the bag was recorded with")
    p.add_argument("--method", default=None, help="estimator method (default: the profile's)")
    p.add_argument("--source", choices=("auto", "rows", "samples"), default="auto",
                   help="recorded rows, recorded sensor samples, or rows when present (default)")
    p.add_argument("--bounds-period", type=non_negative_float, default=None, metavar="S",
                   help="bounds update every S s of data time (default: the estimator node's 2 s; "
                        "0: once at the end)")
    p.add_argument("--max-bound-rows", type=int, default=0,
                   help="most rows in one bounds LP (0: the estimator node's default)")
    p.add_argument("--as-live", action="store_true",
                   help="use only the recorded rows the live estimator received (those published before "
                        "it subscribed are skipped, by its last recorded samples_used)")
    p.add_argument("--calibration", metavar="FILE",
                   help="robot calibration (inertial-id calibrate) to use instead of the profile's identification.calibration")
    p.add_argument("--statistical", action="store_true",
                   help="also a statistical interval (moving-block bootstrap plus the calibration's run-to-run bias; "
                        "nominal 95%%, its coverage not validated on this run: inertial-id study realdata measures it; "
                        "NOT guaranteed; guaranteed momentum method)")
    p.add_argument("--momentum-wrench", action="store_true",
                   help="also the box of the integrated F/T rows (no differentiated acceleration, one LP over "
                        "every row, the sensor offset identified along), from the recorded samples")
    add_json_option(p, "the result (a fleet: the summary)")
    p.add_argument("--out-dir", metavar="DIR", help="a fleet: write BAG.json for each bag here")
    p.add_argument("--workers", type=positive_int, default=2, help="a fleet: local processes (default 2)")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="a fleet: a Dask scheduler (tcp://host:8786) whose workers estimate the bags instead")
    p.set_defaults(handler="estimate.run")
