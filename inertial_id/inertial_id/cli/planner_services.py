"""``inertial-id planner start|stop|status``: the planner's services called and its status read over
DDS, as a node of this process (the options: :mod:`.parsers.planner_services`)."""
from __future__ import annotations

import time

import rclpy
from inertial_id_msgs.msg import ExcitationStatus
from std_srvs.srv import Trigger

from . import RunFailed
from .output import write_json


def call_service(args) -> int:
    """Call ``<planner>/<start|stop>``; exit 0 when the planner accepted, 1 with its reason when not."""
    rclpy.init()
    node = rclpy.create_node("inertial_id_cli")
    try:
        client = node.create_client(Trigger, f"{args.planner}/{args.service}")
        if not client.wait_for_service(timeout_sec=args.timeout):
            raise RunFailed(f"no {args.planner}/{args.service} service within {args.timeout:g} s (is the planner "
                            "running, in this ROS_DOMAIN_ID?)")
        future = client.call_async(Trigger.Request())
        rclpy.spin_until_future_complete(node, future, timeout_sec=args.timeout)
        response = future.result()
        if response is None:
            raise RunFailed(f"{args.planner}/{args.service} did not answer within {args.timeout:g} s")
        if not response.success:
            raise RunFailed(f"the planner refused to {args.service}: {response.message}")
        print(f"{args.service}: {response.message or 'accepted'}")
        return 0
    finally:
        node.destroy_node()
        rclpy.try_shutdown()


def status_dict(msg) -> dict:
    """An ExcitationStatus as a dict with units in the keys."""
    return {"state": msg.state, "trajectory_id": int(msg.trajectory_id), "message": msg.message,
            "certified": bool(msg.certified), "solve_time_s": msg.solve_time,
            "excitation_cost": msg.excitation_cost, "condition_number": msg.condition_number,
            "min_joint_margin_rad": msg.min_joint_margin, "min_velocity_margin_rad_s": msg.min_velocity_margin,
            "min_torque_margin_Nm": msg.min_torque_margin, "min_obstacle_clearance_m": msg.min_obstacle_clearance}


def show_status(args) -> int:
    """Print the next ExcitationStatus the planner publishes (it publishes every 0.1 s)."""
    rclpy.init()
    node = rclpy.create_node("inertial_id_cli")
    received = []
    try:
        node.create_subscription(ExcitationStatus, args.topic, received.append, 10)
        deadline = time.monotonic() + args.timeout
        while not received and time.monotonic() < deadline:
            rclpy.spin_once(node, timeout_sec=0.1)
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    if not received:
        raise RunFailed(f"no status on {args.topic} within {args.timeout:g} s (is the planner running, in this "
                        "ROS_DOMAIN_ID?)")
    s = status_dict(received[0])
    print(f"state: {s['state']} (plan {s['trajectory_id']}){': ' + s['message'] if s['message'] else ''}")
    if s["certified"]:
        print(f"certified margins: joint {s['min_joint_margin_rad']:.3f} rad, velocity "
              f"{s['min_velocity_margin_rad_s']:.3f} rad/s, torque {s['min_torque_margin_Nm']:.2f} N m, "
              f"obstacle clearance {s['min_obstacle_clearance_m']:.3f} m")
    write_json(getattr(args, "json", None), s)
    return 0
