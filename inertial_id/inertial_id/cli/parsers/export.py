"""``inertial-id export RESULT.json|BAG --urdf FILE --yaml FILE``: the identified payload for
integrators. ``--urdf`` writes a URDF fragment, a fixed joint from the payload frame to a new link
carrying the identified ``<inertial>`` (mass kg, COM m, inertia about the COM kg m^2, axes of the
payload frame), to include in ``robot_description`` (``xacro:include`` or pasted before
``</robot>``). ``--yaml`` writes the values with their intervals and the run's flags. The final
estimate of a ``demo``/``estimate`` JSON result is used, or of a bag read with ``--robot``."""
from __future__ import annotations


def register(sub) -> None:
    p = sub.add_parser("export", help="URDF fragment and YAML of the identified payload", description=__doc__)
    p.add_argument("run", metavar="RESULT.json|BAG", help="result JSON of demo/estimate, or a rosbag2 folder")
    p.add_argument("--urdf", metavar="FILE", help="write the URDF fragment here")
    p.add_argument("--yaml", metavar="FILE", help="write the values and their intervals here")
    p.add_argument("--link", default="payload", help="name of the payload link (joint: LINK_joint)")
    p.add_argument("--parent", default=None,
                   help="frame the parameters are in, parent of the fixed joint (default: the result's payload frame)")
    p.add_argument("--robot", default="kinova_gen3", help="profile of a bag (estimator, payload frame)")
    p.add_argument("--method", default=None, help="estimator for a bag without recorded estimates")
    p.set_defaults(handler="export.run")
