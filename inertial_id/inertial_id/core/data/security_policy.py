"""The SROS2 access-control policy of the node suite for one robot profile: which topics each node
may publish and subscribe to and which services it may offer or call, as an ``sros2`` policy file
(format 0.2.0, one enclave per node under ``/inertial_id/``).

With DDS-Security enabled (``ROS_SECURITY_ENABLE=true``, ``ROS_SECURITY_STRATEGY=Enforce``) and the
keystore's permissions generated from this policy, a participant without a certificate of the
keystore cannot join the domain, and an enclave can only write what its node writes: only the
estimator's enclave can publish ``inertial_estimate``, only the planner's can publish trajectories,
and ``~/start``, ``~/stop``, ``~/reset`` and ``~/end_streams`` can be called only from the enclaves
listed in ``callers`` (by default the operator's enclave ``/inertial_id/operator``).

ROS-free: names only. :func:`node_interfaces` is what each node declares (checked against the live
graph by the tests), :func:`policy_xml` the file ``sros2`` turns into permissions.
"""
from __future__ import annotations

from xml.sax.saxutils import escape

from ..signals.driver_streams import DriverEmulator

from .topics import (CLOCK, DIAGNOSTICS, ESTIMATE, EXTERNAL_EFFORT, INERTIA, MARKERS, ROBOT_DESCRIPTION, ROWS,
                     STATUS, TF, TRUTH, WRENCH_COMPENSATED)

# what every rclpy node uses: logging, parameter events and the parameter/type-description services
COMMON_PUBLISH = ("/rosout", "/parameter_events")
COMMON_SUBSCRIBE = ("/parameter_events",)
COMMON_SERVICES = ("describe_parameters", "get_parameter_types", "get_parameters", "list_parameters",
                   "set_parameters", "set_parameters_atomically", "get_type_description")
# what every managed node (rclpy.lifecycle: all of the suite's) adds: its transition events and the
# lifecycle services `ros2 lifecycle` calls
LIFECYCLE_SERVICES = ("change_state", "get_state", "get_available_states", "get_available_transitions",
                      "get_transition_graph")
ENCLAVE_ROOT = "/inertial_id"
OPERATOR = "operator"


def node_interfaces(robot, sim: bool = True) -> dict[str, dict[str, tuple[str, ...]]]:
    """node -> {"publish", "subscribe", "services", "calls"} (absolute topic names; the node's own
    services by their short name; services of others it calls, absolute) of the suite's nodes on
    ``robot``'s profile, ``sim_robot`` included when ``sim`` (it stands for the driver: it publishes
    every stream the profile's driver section names)."""
    sensing = robot.sensing
    controller = robot.spec.controller.topic
    joint_states = sensing.joint_states_topic
    apply = robot.spec.apply      # ~/apply hands the payload to the driver or a latched topic
    applied_topic = (apply.topic,) if apply.interface == "inertia_topic" else ()
    driver_service = tuple(filter(None, [apply.driver_service()]))
    compensated = tuple(f"{topic}{suffix}" for topic, on in ((WRENCH_COMPENSATED, sensing.wrench),
                                                             (EXTERNAL_EFFORT, sensing.joint_torque))
                        if on for suffix in ("", "_bound"))
    nodes = {
        "regressor_builder": {"publish": (ROWS, DIAGNOSTICS),
                              "subscribe": (joint_states, sensing.wrench_topic, CLOCK), "services": ()},
        "estimator": {"publish": (ESTIMATE, MARKERS, INERTIA, DIAGNOSTICS) + applied_topic,
                      "subscribe": (ROWS, STATUS, CLOCK), "services": ("reset", "apply"), "calls": driver_service},
        "excitation_planner": {"publish": (controller, STATUS, DIAGNOSTICS),
                               "subscribe": (joint_states, ESTIMATE, CLOCK),
                               "services": ("start", "stop")},
        "payload_compensator": {"publish": compensated + (DIAGNOSTICS,),
                                "subscribe": (joint_states,) + ((sensing.wrench_topic,) if sensing.wrench else ())
                                + (ESTIMATE, CLOCK), "services": ()},
    }
    if sim:
        streams = tuple(DriverEmulator(robot, float(robot.spec.sim.step_hz)).topics())
        # /robot_description and /tf: the arm for RViz (nodes/robot_state.py)
        nodes["sim_robot"] = {"publish": streams + (TRUTH, ROBOT_DESCRIPTION, TF, CLOCK, DIAGNOSTICS),
                              "subscribe": (controller,), "services": ("end_streams",)}
    for name, d in nodes.items():
        d["publish"] += (f"/{name}/transition_event",)
        d["services"] += LIFECYCLE_SERVICES
    return {name: {k: tuple(dict.fromkeys(v)) for k, v in d.items()} for name, d in nodes.items()}


def callable_services(robot, sim: bool = True) -> tuple[str, ...]:
    """Absolute names of the suite's command services (what an operator may call)."""
    return tuple(f"/{node}/{s}" for node, d in node_interfaces(robot, sim).items() for s in d["services"])


def _topics(kind: str, names) -> str:
    items = "".join(f"\n          <topic>{escape(n)}</topic>" for n in names)
    return f'\n        <topics {kind}="ALLOW">{items}\n        </topics>' if names else ""


def _services(kind: str, names) -> str:
    items = "".join(f"\n          <service>{escape(n)}</service>" for n in names)
    return f'\n        <services {kind}="ALLOW">{items}\n        </services>' if names else ""


def policy_xml(robot, sim: bool = True, callers=(OPERATOR,)) -> str:
    """The ``sros2`` policy (``ros2 security generate_artifacts -p FILE``): an enclave per node
    allowing exactly its interfaces, and an enclave per name in ``callers`` (an operator's tool)
    allowed to call the command services and to read the estimates and the planner's status."""
    enclaves = []
    for node, d in node_interfaces(robot, sim).items():
        own = tuple(f"~{s}" for s in d["services"] + COMMON_SERVICES)
        enclaves.append((node, node, _topics("publish", COMMON_PUBLISH + d["publish"])
                         + _topics("subscribe", COMMON_SUBSCRIBE + d["subscribe"]) + _services("reply", own)
                         + _services("request", d.get("calls", ()))))
    for caller in callers:
        enclaves.append((caller, caller, _topics("publish", COMMON_PUBLISH)
                         + _topics("subscribe", COMMON_SUBSCRIBE + (ESTIMATE, STATUS, DIAGNOSTICS))
                         + _services("request", callable_services(robot, sim))))
    body = "".join(f'\n    <enclave path="{ENCLAVE_ROOT}/{name}">\n      <profiles>\n'
                   f'      <profile ns="/" node="{node}">{rules}\n      </profile>\n      </profiles>\n    </enclave>'
                   for name, node, rules in enclaves)
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<policy version="0.2.0">\n  <enclaves>{body}\n  </enclaves>\n</policy>\n'
