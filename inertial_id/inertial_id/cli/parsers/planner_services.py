"""``inertial-id planner start|stop|status``: the excitation planner's ``~/start`` and ``~/stop`` services
(std_srvs/Trigger) and its ``excitation_status``, for installs without the ros2 CLI (the same as
``ros2 service call /excitation_planner/start std_srvs/srv/Trigger`` and ``ros2 topic echo
/excitation_status``). They reach the nodes of the current ROS_DOMAIN_ID."""
from __future__ import annotations

from ...core.data.topics import STATUS
from . import add_json_option, positive_float

PLANNER = "/excitation_planner"


def register(sub) -> None:
    for name, text in (("start", "start the exciting motion (the planner's ~/start service): the robot moves"),
                       ("stop", "brake to rest on a certified plan (the planner's ~/stop service)"),
                       ("status", "the planner's state, certified margins and last message (excitation_status)")):
        p = sub.add_parser(name, help=text, description=f"{text}; the nodes of the current ROS_DOMAIN_ID, "
                                                        "no ros2 CLI needed")
        p.add_argument("--planner", default=PLANNER, help=f"the planner node's name (default {PLANNER})")
        p.add_argument("--timeout", type=positive_float, default=15.0,
                       help="seconds to wait for the planner (discovery included)")
        if name == "status":
            p.add_argument("--topic", default=STATUS, help="the planner's status topic")
            add_json_option(p, "the status")
        p.set_defaults(handler="planner_services.show_status" if name == "status" else "planner_services.call_service",
                       service=name)
