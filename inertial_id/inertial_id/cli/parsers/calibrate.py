"""``inertial-id calibrate RUN [RUN...] --out FILE``: calibrate the robot from recordings without
payload (run folders, bags, or a folder of the shared ``*_downsampled_N.csv`` layout): friction
``[Fc, Fv, Ia]``, torque sign and effort delay per joint (sign flip, delay and armature kept beyond the
profile's model only when held-out error supports them), the range of the per-run torque offset, velocity-limit
plateaus (excluded, counted), and the bound of the remaining model error per joint and momentum
window length (per joint: its largest error seen x max(1, its own run-to-run exceedance, each
calibration run left out in turn) x a margin, at least x --safety-factor; the joints the held-out
runs widened are named), validated on --validate runs. Writes the
calibration YAML a profile names (``identification.calibration``) or ``estimate --calibration``
takes. Exit code 1 when a held-out run exceeds the bound (the file is written, marked not validated)."""
from __future__ import annotations

from ...defaults import HELD_OUT_MARGIN, MAX_EFFORT_DELAY_S, OFFSET_MARGIN_NM, SAFETY_FACTOR
from . import add_json_option


def register(sub) -> None:
    p = sub.add_parser("calibrate", help="calibrate friction, torque sign/offsets and error bounds from runs without payload",
                       description=__doc__)
    p.add_argument("runs", nargs="+", metavar="RUN", help="recordings without payload (run folder, bag, shared-layout folder)")
    p.add_argument("--out", required=True, metavar="FILE", help="calibration YAML to write")
    p.add_argument("--validate", nargs="+", default=[], metavar="RUN", help="held-out recordings to validate on")
    p.add_argument("--robot", default="kinova_gen3", help="robot profile name or YAML path")
    p.add_argument("--safety-factor", type=float, default=SAFETY_FACTOR,
                   help=f"floor of every joint's factor: row bound per joint = largest remaining error seen x "
                        f"max(1, that joint's run-to-run exceedance) x {HELD_OUT_MARGIN:g}, at least x this "
                        f"(default {SAFETY_FACTOR:g})")
    p.add_argument("--offset-margin", type=float, default=OFFSET_MARGIN_NM, metavar="NM",
                   help=f"the per-run offset box: the calibration runs' range widened by this (default {OFFSET_MARGIN_NM:g} N m)")
    p.add_argument("--max-effort-delay", type=float, default=MAX_EFFORT_DELAY_S, metavar="S",
                   help="largest lag of the logged effort behind the states tried per joint, in 10 ms steps; a "
                        "best fit at this largest value is not identified and not kept "
                        f"(0: none; default {MAX_EFFORT_DELAY_S:g} s)")
    add_json_option(p, "the calibration and its report")
    p.set_defaults(handler="calibrate.run")
