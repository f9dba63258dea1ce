"""A multi-threaded executor that queues a waiting callback once.

rclpy's ``MultiThreadedExecutor`` (9.1 and earlier; ros2/rclpy#1452) yields a task again on every
pass of its wait loop until a pool thread has *started* it, and submits it to the pool each time.
While one callback computes, the spinning thread fills the pool's queue with copies of the waiting
ones (each copy, when it runs, sees the task taken and returns) and holds the GIL doing it: in the
excitation planner, measured over DDS, its joint-state subscription was handed out some 700 times
in 0.45 s without its callback running once, and the planner faulted on "joint states stale" with
the messages waiting in its queue. Here a task waiting for a thread is not submitted again, and
the spinning thread, handed it again, waits (GIL released) until a thread has started it.
"""

import threading

from rclpy.executors import (ConditionReachedException, ExternalShutdownException, MultiThreadedExecutor,
                             ShutdownException, TimeoutException)

# the longest the spinning thread waits for a queued task to start before it looks for work again
START_WAIT_S = 0.01


class QueueOnceExecutor(MultiThreadedExecutor):
    """``MultiThreadedExecutor`` whose tasks wait for a pool thread at most once each."""

    def __init__(self, num_threads: int):
        super().__init__(num_threads=num_threads)
        self._waiting: set = set()               # tasks submitted to the pool, not yet started
        self._started = threading.Condition()

    def _run(self, task) -> None:
        with self._started:
            self._waiting.discard(task)
            self._started.notify_all()
        task()

    def _spin_once_impl(self, timeout_sec=None, wait_condition=lambda: False) -> None:
        try:
            task, _, _ = self.wait_for_ready_callbacks(timeout_sec, None, wait_condition)
        except (ExternalShutdownException, ShutdownException, TimeoutException, ConditionReachedException):
            return
        with self._started:
            if task in self._waiting:
                self._started.wait_for(lambda: task not in self._waiting, timeout=START_WAIT_S)
                return
            self._waiting.add(task)
        self._executor.submit(self._run, task)
        self._futures.append(task)
        for future in self._futures[:]:
            if future.done():
                self._futures.remove(future)
                future.result()                  # a callback's exception ends the spin, as in rclpy
