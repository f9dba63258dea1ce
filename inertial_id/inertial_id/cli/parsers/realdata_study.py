"""``inertial-id study realdata``: guaranteed payload bounds on real Kinova Gen3 recordings with known
virtual payloads, leave one run out (calibrate on the others, test on the held-out run plus the exact
torques of each payload); per case containment, row consistency of the truth, widths, point errors
and the statistical interval's coverage (always computed), by which it is labelled; the summary holds
the issue's Done-when figures."""
from __future__ import annotations

from ...defaults import REALDATA_BOOTSTRAP_REPLICATES, REALDATA_MASSES_KG, SAFETY_FACTOR, SOURCE_ROOT
from . import add_json_option, float_list

DEFAULT_DATA = SOURCE_ROOT.parent / ".." / "shared" / "data" / "kinova_gen3_real"


def register(sub) -> None:
    p = sub.add_parser("realdata", help="payload bounds on real Gen3 runs with virtual payloads (leave one run out)",
                       description=__doc__)
    p.add_argument("--data", nargs="+", default=[str(DEFAULT_DATA)], metavar="RUN",
                   help="recordings without payload: run folders, bags or a shared-layout folder (default: ../shared/data/kinova_gen3_real)")
    p.add_argument("--robot", default="kinova_gen3", help="robot profile name or YAML path")
    p.add_argument("--masses", type=float_list, default=list(REALDATA_MASSES_KG), help="payload masses, kg, comma separated")
    p.add_argument("--com-offsets", type=int, default=3, help="how many of the study's 3 COM offsets (1-3)")
    p.add_argument("--folds", type=lambda s: [int(x) - 1 for x in s.split(",")], default=None,
                   help="held-out runs by position (1-based, comma separated; default all)")
    p.add_argument("--safety-factor", type=float, default=SAFETY_FACTOR)
    p.add_argument("--replicates", type=int, default=REALDATA_BOOTSTRAP_REPLICATES, help="bootstrap replicates")
    add_json_option(p, "cases and summary")
    p.set_defaults(handler="realdata_study.run")
