"""MarkerArray messages of :mod:`inertial_id.core.data.markers` (the estimator node publishes them)."""
from __future__ import annotations

from visualization_msgs.msg import Marker, MarkerArray

from ..core.data.markers import payload_markers


def marker_array(header, estimate, lower=None, upper=None) -> MarkerArray:
    """The payload markers of one estimate, in ``header.frame_id`` (the estimate's frame), after a
    DELETEALL that clears the previous estimate's (none are added for an unusable estimate)."""
    clear = Marker()
    clear.header, clear.action = header, Marker.DELETEALL
    out = MarkerArray(markers=[clear])
    for spec in payload_markers(estimate, lower, upper):
        mk = Marker()
        mk.header = header
        mk.ns, mk.id, mk.type, mk.action = spec.ns, spec.id, spec.type, Marker.ADD
        mk.pose.position.x, mk.pose.position.y, mk.pose.position.z = (float(v) for v in spec.position)
        (mk.pose.orientation.x, mk.pose.orientation.y, mk.pose.orientation.z,
         mk.pose.orientation.w) = (float(v) for v in spec.orientation_xyzw)
        mk.scale.x, mk.scale.y, mk.scale.z = (float(v) for v in spec.scale)
        mk.color.r, mk.color.g, mk.color.b, mk.color.a = spec.rgba
        mk.text = spec.text
        out.markers.append(mk)
    return out
