"""QueueOnceExecutor, the planner's multi-threaded executor: a callback waiting for a pool thread is
submitted once (rclpy's own MultiThreadedExecutor submits it on every pass of its wait loop), every
callback still runs, and a callback's exception still ends the spin."""

import time
from collections import Counter

import pytest

pytestmark = pytest.mark.ros


def spin_busy_node(executor, seconds: float = 3.0):
    """A node with a 100 Hz timer and a 5 Hz timer computing 0.1 s (pure Python, GIL held between
    switches), each in a group of its own, spun by ``executor`` for ``seconds``: (fast-timer times,
    pool submissions per task)."""
    import rclpy
    from rclpy.callback_groups import MutuallyExclusiveCallbackGroup

    node = rclpy.create_node("executor_test")
    fast = []

    def compute():
        end = time.monotonic() + 0.1
        while time.monotonic() < end:
            sum(range(1000))

    node.create_timer(0.01, lambda: fast.append(time.monotonic()), callback_group=MutuallyExclusiveCallbackGroup())
    node.create_timer(0.2, compute, callback_group=MutuallyExclusiveCallbackGroup())
    submitted = Counter()
    submit = executor._executor.submit

    def counted(fn, *args):
        submitted[args[0] if args else fn] += 1         # the task itself: ids are reused
        return submit(fn, *args)
    executor._executor.submit = counted
    spin(executor, node, seconds)
    return fast, submitted


def spin(executor, node, seconds: float) -> None:
    """Spin ``node`` on ``executor`` for ``seconds``; both are disposed of after."""
    executor.add_node(node)
    try:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            executor.spin_once(timeout_sec=0.05)
    finally:
        executor.remove_node(node)
        # the tasks still queued in the pool run while the node and the executor's guard condition
        # exist: rclpy's shutdown destroys the guard condition first, those tasks then fail, and
        # their errors are printed when they are collected, inside whichever test runs then
        executor._executor.shutdown(wait=True)
        node.destroy_node()
        executor.shutdown()


def test_a_waiting_callback_is_submitted_once_and_every_callback_runs(ros_env):
    from rclpy.executors import MultiThreadedExecutor

    from inertial_id.nodes.executor import QueueOnceExecutor
    fast, submitted = spin_busy_node(QueueOnceExecutor(2))
    stock_fast, stock_submitted = spin_busy_node(MultiThreadedExecutor(num_threads=2))
    gap = max(b - a for a, b in zip(fast, fast[1:]))
    stock_gap = max(b - a for a, b in zip(stock_fast, stock_fast[1:]))
    print(f"queue-once: {len(fast)} fast callbacks in 3 s, largest gap {gap * 1000:.0f} ms, "
          f"{sum(submitted.values())} submissions of {len(submitted)} tasks; rclpy's: {len(stock_fast)}, "
          f"{stock_gap * 1000:.0f} ms, {sum(stock_submitted.values())} submissions of {len(stock_submitted)} tasks "
          f"(up to {max(stock_submitted.values())} of one)")
    assert max(submitted.values()) == 1
    assert len(fast) >= 150                  # of 300: the 100 Hz timer runs while the other computes


def test_a_callbacks_exception_ends_the_spin(ros_env):
    import rclpy

    from inertial_id.nodes.executor import QueueOnceExecutor
    node = rclpy.create_node("executor_raise_test")

    def fail():
        raise RuntimeError("from a callback")
    node.create_timer(0.01, fail)
    with pytest.raises(RuntimeError, match="from a callback"):
        spin(QueueOnceExecutor(2), node, 5.0)
