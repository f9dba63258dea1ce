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

import concurrent.futures
import threading

from rclpy.executors import (ConditionReachedException, ExternalShutdownException, MultiThreadedExecutor,
                             ShutdownException, TimeoutException)

# the longest the spinning thread waits for a queued task to start before it looks for work again
START_WAIT_S = 0.01
# the longest shutdown() waits for the callbacks handed to the pool (one that waits for more spinning
# would wait forever: nothing spins once the node is stopping)
FINISH_WAIT_S = 10.0


class QueueOnceExecutor(MultiThreadedExecutor):
    """``MultiThreadedExecutor`` whose tasks wait for a pool thread at most once each."""

    def __init__(self, num_threads: int):
        super().__init__(num_threads=num_threads)
        self._waiting: set = set()               # tasks submitted to the pool, not yet started
        # tasks a pool thread is running: rclpy marks a task executing only once it is inside it, and
        # handed out in between (CI, 1 task in 281) it was submitted a second time
        self._running: set = set()
        self._started = threading.Condition()
        self._handed: set = set()                # the pool's futures of the tasks not yet finished

    def _run(self, task) -> None:
        with self._started:
            self._waiting.discard(task)
            self._running.add(task)
            self._started.notify_all()
        try:
            task()
        finally:
            with self._started:
                self._running.discard(task)
                self._started.notify_all()

    def _spin_once_impl(self, timeout_sec=None, wait_condition=lambda: False) -> None:
        try:
            task, _, _ = self.wait_for_ready_callbacks(timeout_sec, None, wait_condition)
        except (ExternalShutdownException, ShutdownException, TimeoutException, ConditionReachedException):
            return
        with self._started:
            if task in self._waiting or task in self._running:
                self._started.wait_for(lambda: task not in self._waiting and task not in self._running,
                                       timeout=START_WAIT_S)
                return
            self._waiting.add(task)
        self._handed = {f for f in self._handed if not f.done()}
        self._handed.add(self._executor.submit(self._run, task))
        self._futures.append(task)
        for future in self._futures[:]:
            if future.done():
                self._futures.remove(future)
                future.result()                  # a callback's exception ends the spin, as in rclpy

    def shutdown(self, timeout_sec=None, **kwargs) -> bool:
        """Let the callbacks handed to the pool finish (at most :data:`FINISH_WAIT_S`), then rclpy's
        shutdown. rclpy's destroys the executor's guard condition at once (its wait for the work in
        progress is skipped from Jazzy on: executors.py, ``Executor.shutdown`` tests ``_is_shutdown``
        right after setting it), and a task that starts later fails on triggering it ("cannot use
        Destroyable because destruction was requested"), printed at exit ("The following exception
        was never retrieved"). A callback's own exception is raised here, as the spin would have."""
        concurrent.futures.wait(self._handed, timeout=FINISH_WAIT_S)
        for task in self._futures:
            if task.done():
                task.result()
        return super().shutdown(timeout_sec, **kwargs)
