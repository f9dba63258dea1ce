"""``inertial-id study baseline``: the static-pose mass and COM identification users run otherwise
(a few wrist poses, held still, gravity only) against the suite's guaranteed pipeline, on the same
simulated cases (or, with ``--real``, the real Gen3 recordings): per case mass error, COM error,
seconds of motion and time to a usable estimate, side by side, plus medians."""
from __future__ import annotations

from ...defaults import BASELINE_POSES, BASELINE_WRIST_OFFSETS_RAD
from . import add_json_option, non_negative_int, positive_int, str_list
from .realdata_study import DEFAULT_DATA


def register(sub) -> None:
    p = sub.add_parser("baseline", help="static-pose mass + COM baseline vs ours: errors and seconds of motion",
                       description=__doc__)
    p.add_argument("--robot", default="kinova_gen3", help="robot profile name or YAML path (xarm7, kinova_gen3)")
    p.add_argument("--cases", type=positive_int, default=5, help="simulated cases (payload and robot draws)")
    p.add_argument("--payloads", type=str_list, default=["4lb", "5lb", "6lb", "7lb", "8lb"],
                   help="dumbbells, comma separated (4lb..8lb); cases cycle through them")
    p.add_argument("--poses", type=int, default=BASELINE_POSES, help=f"static poses of the baseline (2-{len(BASELINE_WRIST_OFFSETS_RAD)})")
    p.add_argument("--seed", type=non_negative_int, default=0)
    p.add_argument("--workers", type=positive_int, default=1, help="cases run in parallel processes")
    p.add_argument("--real", action="store_true",
                   help="the real Gen3 recordings with virtual payloads instead of simulation (leave one run out)")
    p.add_argument("--data", nargs="+", default=[str(DEFAULT_DATA)], metavar="RUN",
                   help="with --real: recordings without payload (run folders, bags or a shared-layout folder; "
                        "default: ../shared/data/kinova_gen3_real)")
    add_json_option(p, "the table, medians and cases")
    p.set_defaults(handler="baseline_study.run")
