"""The SROS2 policy (core/data/security_policy.py) says exactly what each node does on the live graph:
every topic a running node publishes or subscribes to and every service it offers is allowed by its
enclave (else enforcement would break the suite), and the command services are callable only from
the operator's enclave. Enforcement itself needs a Fast DDS built with its security plugins; the
PyPI wheels are not, so enforcement is not exercised here (README: Security)."""
import xml.etree.ElementTree as ET

import pytest

from inertial_id.core.data import security_policy as sp
from inertial_id.core.robot.model import load_robot


def allowed(policy: str) -> dict:
    """node -> {"publish", "subscribe", "reply", "request"} name sets of the policy."""
    out = {}
    for profile in ET.fromstring(policy).iter("profile"):
        node = profile.get("node")
        rules = out.setdefault(node, {k: set() for k in ("publish", "subscribe", "reply", "request")})
        for group in profile:
            for kind in rules:
                if group.get(kind) == "ALLOW":
                    rules[kind] |= {e.text for e in group}
    return out


def test_policy_gives_each_node_its_own_interfaces_and_commands_only_to_the_operator():
    robot = load_robot("xarm7")
    rules = allowed(sp.policy_xml(robot))
    assert set(rules) == {"regressor_builder", "estimator", "excitation_planner", "payload_compensator", "sim_robot",
                          "operator"}
    publishers = {n for n, r in rules.items() if "/inertial_estimate" in r["publish"]}
    assert publishers == {"estimator"}                           # nobody else can forge an estimate
    controller = robot.spec.controller.topic
    assert {n for n, r in rules.items() if controller in r["publish"]} == {"excitation_planner"}
    assert {n for n, r in rules.items() if "/regressor_samples" in r["publish"]} == {"regressor_builder"}
    # besides the operator, only the estimator calls a service: the driver's set-load (~/apply)
    assert {n for n, r in rules.items() if r["request"]} == {"operator", "estimator"}
    assert rules["estimator"]["request"] == {robot.spec.apply.service}
    # the operator drives the managed nodes' lifecycles too (ros2 lifecycle set)
    lifecycle = {f"/{n}/{s}" for n in rules if n != "operator" for s in sp.LIFECYCLE_SERVICES}
    assert rules["operator"]["request"] == {"/estimator/reset", "/estimator/apply", "/excitation_planner/start",
                                            "/excitation_planner/stop", "/sim_robot/end_streams"} | lifecycle


@pytest.mark.ros
def test_the_live_graph_stays_inside_the_policy(ros_env, tmp_path):
    """The nodes of the simulated xArm7 on the live graph: every name they use is allowed to
    them, and every topic the policy names for them is in use (/clock only with simulated time,
    /tf only when the simulator publishes the arm's frames)."""
    import rclpy
    from inertial_id.nodes.launch import start_node_set
    from ros_helpers import spin_until
    robot = load_robot("xarm7")
    interfaces = sp.node_interfaces(robot)
    rules = allowed(sp.policy_xml(robot))
    procs = start_node_set("xarm7", ros_env, str(tmp_path))
    node = rclpy.create_node("policy_check")
    try:
        def graph(name):
            if name not in node.get_node_names():
                return set(), set(), set()
            pubs = {t for t, _ in node.get_publisher_names_and_types_by_node(name, "/")}
            subs = {t for t, _ in node.get_subscriber_names_and_types_by_node(name, "/")}
            srvs = {s for s, _ in node.get_service_names_and_types_by_node(name, "/")}
            return pubs, subs, srvs

        def in_use(name, d):
            """Everything the policy names for the node is on the graph (/clock: only with sim time)."""
            pubs, subs, srvs = graph(name)
            return set(d["publish"]) - {"/clock", "/tf"} <= pubs and set(d["subscribe"]) - {"/clock"} <= subs and \
                {f"/{name}/{s}" for s in d["services"]} <= srvs

        assert spin_until(node, lambda: all(in_use(n, d) for n, d in interfaces.items()), 60.0), \
            {n: graph(n) for n in interfaces}
        for name in interfaces:
            pubs, subs, srvs = graph(name)
            assert pubs <= rules[name]["publish"], (name, pubs - rules[name]["publish"])
            assert subs <= rules[name]["subscribe"], (name, subs - rules[name]["subscribe"])
            own = {f"/{name}/{s.lstrip('~')}" for s in rules[name]["reply"]}
            assert srvs <= own, (name, srvs - own)
        assert procs.dead() == []
    finally:
        node.destroy_node()
        procs.stop()
