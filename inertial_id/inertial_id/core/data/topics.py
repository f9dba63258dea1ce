"""Topic names of the suite, in one place: absolute (``/name``) as recordings and security policies
hold them; a node that wants to be remappable under a namespace uses :func:`relative`."""
from __future__ import annotations

JOINT_STATES = "/joint_states"
WRENCH = "/wrench"
ROWS = "/regressor_samples"
ESTIMATE = "/inertial_estimate"
MARKERS = "/inertial_estimate/markers"
INERTIA = "/inertia"                           # the estimate as geometry_msgs/InertiaStamped
# the payload compensator's outputs (its private ~/ topics), each with a ..._bound twin
WRENCH_COMPENSATED = "/payload_compensator/wrench_compensated"
EXTERNAL_EFFORT = "/payload_compensator/external_effort"
STATUS = "/excitation_status"
TRUTH = "/sim/payload_truth"
DIAGNOSTICS = "/diagnostics"
JOINT_ACCELERATIONS = "/joint_accelerations"   # recordings that carry their own acceleration estimate
CLOCK = "/clock"
ROBOT_DESCRIPTION = "/robot_description"
TF = "/tf"


def relative(topic: str) -> str:
    """``topic`` without its leading slash, so that a node's namespace applies to it."""
    return topic.lstrip("/")
