"""estimator: folds RegressorSample rows into an estimate with guaranteed bounds and streams
InertialEstimate (plus an RViz MarkerArray of the payload's centre of mass and inertia box, and
geometry_msgs/InertiaStamped on ``inertia``); ``~/apply`` hands the estimate to the robot on request
(:mod:`inertial_id.nodes.payload_apply`)."""
from __future__ import annotations

import threading
import time
from collections import deque

import numpy as np
from diagnostic_msgs.msg import DiagnosticStatus
from std_srvs.srv import Trigger
from visualization_msgs.msg import MarkerArray

from inertial_id_msgs.msg import ExcitationStatus, InertialEstimate, RegressorSample

from ..core.signals.stamps import stamp_ns, stamp_s
from ..core.estimators.explain import prior_explanation
from ..core.estimators.factory import METHODS
from ..core.estimators.intake import Skipped
from ..core.estimators.interrupt import Interrupted, interruptible
from ..core.estimators.persistence import default_state_path, load_state, move_aside, remove_state, save_state
from ..core.payload.payload_apply import ApplyLimits
from ..core.estimators.session import NUMERICAL_FAILURES, PROVISIONAL, STREAM_PAUSE, EstimationSession, LiveSchedule
from .common import (FINAL_ESTIMATE_REASON, FINAL_ESTIMATE_STAMP, FINAL_UPDATE_EVENT, KEPT_QOS, ROWS_IN_QOS, DropCounter, ManagedNode, declare, declare_robot, run_node,
                     s_to_stamp, when_active)
from .inputs import FUTURE_TOLERANCE_S, Rejected, checked_stamp, lost_message_events
from .markers import marker_array
from .payload_apply import PayloadOutputs

# After a restart, the rows the builder published while this node was down: the builder keeps its
# last 500 messages (transient local, KEPT_QOS); a second subscription with that durability gets
# them on matching. Rows already in the restored state (stamped up to the last one it holds) and the
# second copy of each message (both subscriptions match the builder) are skipped.
ROWS_CATCH_UP_QOS = KEPT_QOS
SEEN_MESSAGES = 4096
# state key of the latest row stamp folded into the estimator (the node's, not the estimator's)
LAST_STAMP_KEY = "intake_last_stamp_s"
# the box restored at start-up is published before anyone has discovered the new process
ESTIMATE_QOS = KEPT_QOS


class RecentKeys:
    """The last ``size`` keys seen, with a constant-time membership test."""

    def __init__(self, size: int):
        self.order: deque = deque(maxlen=size)
        self.members: set = set()

    def add(self, key) -> bool:
        """Remember ``key``; False when it is among the last ``size`` already."""
        if key in self.members:
            return False
        if len(self.order) == self.order.maxlen:
            self.members.discard(self.order[0])
        self.order.append(key)
        self.members.add(key)
        return True


class EstimatorNode(ManagedNode):
    """Row intake runs in the executor and only checks and queues; a worker thread owns the
    estimator (folds rows in, updates the bounds, solves for the estimate, saves the state), so a
    long LP never stalls intake. The executor's timers set the schedule and publish the worker's
    results. Managed: set up on configure (the saved state restored then); rows are taken and
    estimates published only while active."""

    def __init__(self):
        super().__init__("estimator")

    def configure(self) -> None:
        self.InertialEstimate = InertialEstimate
        self.robot = declare_robot(self)
        profile_method = self.robot.spec.identification.method
        self.method = declare(self, "method", profile_method,
                              f"estimation method: {' | '.join(METHODS)}; empty: the profile's",
                              choices=("", *METHODS)) or profile_method
        self.max_rows = declare(self, "max_bound_rows", 0,
                                "most rows in one bounds LP (0: 3000 per-sample rows, 300 kept momentum rows)",
                                low=0, high=10**7)
        self.bounds_period = declare(self, "bounds_period_s", 2.0,
                                     "the guaranteed bounds are updated every this much data time (row stamps), s; "
                                     "rows left over when the stream stops, after as much time without rows",
                                     low=1e-3, high=3600.0)
        publish_period = declare(self, "publish_period_s", 0.5, "period of InertialEstimate publication, s",
                                      low=1e-3, high=3600.0)
        # a final update over a 20 s xArm7 run's rows takes about 10 s, and ros2 launch follows a
        # SIGINT with SIGTERM after 5 s
        self.stop_wait_s = declare(self, "stop_wait_s", 5.0,
                                   "how long a stop waits for a bounds update in progress, s; then the process "
                                   "ends without it (the state as saved at the last publication)",
                                   low=0.0, high=3600.0)
        self.future_tolerance = declare(self, "future_tolerance_s", FUTURE_TOLERANCE_S,
                                        "rows stamped further ahead of this node's clock are dropped",
                                        low=0.0, high=3600.0)
        state_file = declare(self, "state_file", "default",
                             "where the estimator state is kept across restarts: a path, 'default' "
                             "($ROS_HOME/inertial_id/estimator_<robot>_<method>_domain<id>.npz) or 'none' (not kept)")
        status_topic = declare(self, "excitation_status_topic", "excitation_status",
                               "the planner's status: when its motion ends (done or failed), the box is solved "
                               "once over every row kept, the F/T offset's stated box checked, as when the "
                               "stream stops (the arm at rest keeps streaming rows)")
        state_max_age = declare(self, "state_max_age_s", 600.0,
                                "a saved state older than this belongs to another session: not restored", low=0.0)
        self.drops = DropCounter(self)
        self.state_path = default_state_path(self.robot.name, self.method) if state_file == "default" else \
            (None if state_file in ("", "none") else state_file)
        self.session = self._new_session()
        # a reset called (executor) and taken (worker): while more are called, the worker gives up
        # the bounds update it is in, between two LPs (one writer each, so no lock)
        self.resets_called = self.resets = 0
        self.updating = False                # the worker is in a final bounds update (a reset gives it up)
        self.prior_said = None       # the parameters last said to be at the prior (publish_one)
        self.restored = False
        self.last_stamp_s = None          # latest row stamp folded in (worker), saved with the state
        self.resume_after_s = None        # after a restore: rows up to this stamp are in the state
        self._restore(state_max_age)
        self.live = LiveSchedule(publish_first=self.restored)
        self.queue: deque = deque()          # ("rows", args) | ("reset", None); appends are thread-safe
        self.wake = threading.Event()
        self.stopping = threading.Event()
        self.results: deque = deque()        # estimates from the worker, published in order
        self.pub = self.create_publisher(InertialEstimate, "inertial_estimate", ESTIMATE_QOS)
        self.pub_markers = self.create_publisher(MarkerArray, "inertial_estimate/markers", 10)
        self.payload_outputs = PayloadOutputs(self, self.robot, self.drops)   # inertia, ~/apply
        self.create_subscription(RegressorSample, "regressor_samples", self.on_rows, ROWS_IN_QOS,
                                 event_callbacks=lost_message_events(self.drops, "lost_in_transport"))
        self.seen = RecentKeys(SEEN_MESSAGES)       # (stamp, kind, rows) of recent messages
        if self.restored:
            self.create_subscription(RegressorSample, "regressor_samples", self.on_rows, ROWS_CATCH_UP_QOS)
        self.create_subscription(ExcitationStatus, status_topic, self.on_excitation_status, 10)
        self.create_service(Trigger, "~/reset", self.on_reset)
        self.create_timer(publish_period, self.publish)
        self.create_timer(self.bounds_period, self._idle_tick)
        self.worker = threading.Thread(target=self._work, name="estimator-worker", daemon=True)
        self.worker.start()

    def _new_session(self) -> EstimationSession:
        # the ~/apply gate's directions: their support over each final LP (PayloadOutputs)
        return EstimationSession(self.robot, self.method, self.max_rows or None, self.bounds_period,
                                 ApplyLimits.from_robot(self.robot).gate_directions())

    def _state_header(self) -> dict:
        lo, hi = self.robot.payload_prior()
        return {"method": self.method, "robot": self.robot.name, "columns": list(self.session.estimator.column_names),
                "prior_lower": lo.tolist(), "prior_upper": hi.tolist()}

    def _restore(self, max_age_s: float) -> None:
        """Continue from the saved state if it is intact and ours; a damaged one is moved aside and
        the estimator starts from the prior, saying so (log and /diagnostics)."""
        if self.state_path is None:
            return
        state, why, moved = load_state(self.state_path, self._state_header(), max_age_s)
        last_stamp = state.pop(LAST_STAMP_KEY, None) if state is not None else None
        if state is not None:
            try:
                self.session.restore(state)
            except (ValueError, KeyError, TypeError, IndexError) as exc:
                self.session = self._new_session()
                moved = move_aside(self.state_path)
                why = f"damaged state file {self.state_path}: {type(exc).__name__}: {exc}; " + \
                    (f"moved to {moved.name}" if moved else "could not move it aside")
                state = None
        if state is None:
            if why.startswith("damaged"):
                self.drops.event("state_file_damaged")
                self.drops.set_status(DiagnosticStatus.WARN, f"started from the prior box: {why}")
                self.get_logger().warning(f"starting from the prior box: {why}")
            else:
                self.get_logger().info(f"starting from the prior box: {why}")
            return
        r = self.session.result()
        self.restored = True
        if last_stamp is not None:
            self.resume_after_s = self.last_stamp_s = float(last_stamp)
        self.drops.set_status(DiagnosticStatus.OK, f"restored the box saved at {self.state_path} "
                                                   f"({r.samples_used} samples)")
        self.get_logger().info(f"restored estimator state from {self.state_path}: mass in "
                               f"[{r.lower[0]:.4g}, {r.upper[0]:.4g}] kg")

    def _save(self) -> None:
        """Write the state (box, kept and pending rows, counters); called before every publication,
        so no published ``samples_used`` is ever ahead of the state a restart resumes from."""
        state = self.session.estimator.state() if self.state_path is not None else None
        if state is None:
            return
        if self.last_stamp_s is not None:
            state = {**state, LAST_STAMP_KEY: self.last_stamp_s}
        try:
            save_state(self.state_path, self._state_header(), state)
        except (OSError, ValueError) as exc:
            self.drops.drop("state_not_saved", f"{self.state_path}: {exc}")

    def on_reset(self, request, response):
        """Back to the prior box: rows queued before the call are discarded, the saved state removed,
        and a bounds update in progress is given up (a final one over every kept row takes about 10 s
        on a 20 s xArm7 run)."""
        self.queue.append(("reset", None))
        self.resets_called += 1         # after the append: the worker finds the reset it gives up for
        self.wake.set()
        response.success = True
        response.message = "estimator reset to the prior box (saved state removed)" + \
            ("; the bounds update in progress given up" if self.updating else "")
        return response

    @when_active
    def on_rows(self, msg) -> None:
        if self.restored:
            key = (msg.header.stamp.sec, msg.header.stamp.nanosec, msg.kind, msg.rows)
            if not self.seen.add(key):          # the same message through the other subscription
                return
            if self.resume_after_s is not None and \
                    stamp_s(msg.header.stamp) <= self.resume_after_s:
                self.drops.ignore("already_in_saved_state")
                return
        checked = self.session.check(msg.kind, msg.parameter_names, msg.rows, msg.samples, msg.regressor,
                                     msg.measurement, msg.noise_bound, msg.noise_sigma, msg.kinematics,
                                     msg.acceleration_bound)
        if isinstance(checked, Skipped):
            if checked.ignored:
                self.drops.ignore(checked.reason)     # another estimator may use them
            else:
                self.drops.drop(checked.reason, checked.detail)
            return
        try:
            checked_stamp(msg.header.stamp, self.get_clock().now().nanoseconds * 1e-9, self.future_tolerance)
        except Rejected as r:
            self.drops.drop(r.reason, r.detail)
            return
        t = stamp_s(msg.header.stamp)
        self.queue.append(("rows", (t, checked)))
        self.drops.ok()

    def _work(self) -> None:
        """Owns the estimator. Bounds updates follow the rows' data time
        (:class:`~inertial_id.core.estimators.schedule.UpdateSchedule`, as offline); the final
        updates and the publications are :class:`~inertial_id.core.estimators.session.LiveSchedule`'s
        jobs, which the node's timers (simulated time on a replay) and the planner's status request,
        waking this thread."""
        while not self.stopping.is_set():
            self.wake.wait(1.0)
            self.wake.clear()
            try:
                with interruptible(lambda: self.resets_called > self.resets):
                    self._step()
            except Interrupted:
                self._reset_after_interrupt()

    def _step(self) -> None:
        """Fold in the queued rows, then do the schedule's job (final update, publication)."""
        while self.queue:
            item, args = self.queue.popleft()
            if item == "reset":
                self._reset()
                continue
            t, rows = args
            if self.live.take_rows():
                self.session.resume()
                self.drops.event("rows_after_idle_update")
                self.get_logger().info("rows again after a bounds period without any: the stream had paused")
            added = self.session.add(t, rows)
            if added.failure:
                self.drops.drop("solver_failed_on_rows", added.failure)
                continue
            self._count(added, t)
            self.last_stamp_s = t if self.last_stamp_s is None else max(self.last_stamp_s, t)
            self.live.rows_added(added.updated)
        job = self.live.next_job()
        if job.resume:
            self.session.resume()
            self.get_logger().info("the planner moves again after a motion that failed: "
                                   "that motion's final update is withdrawn until the next")
        final = ""          # why the box to publish comes from a final update that succeeded
        if job.final:
            if job.final != STREAM_PAUSE:
                self.drops.event(FINAL_UPDATE_EVENT)
            if not self._final_update(provisional=job.final in PROVISIONAL):
                final = job.final
        if job.publish:
            if job.save:
                self._save()
            try:
                self.results.append((self.session.result(), self.session.data_until, final))
            except NUMERICAL_FAILURES as exc:
                self.drops.drop("solver_failed_estimate", f"{type(exc).__name__}: {exc}")

    def _reset_after_interrupt(self) -> None:
        """A reset gave up the bounds update in progress: the session it left half-updated is
        replaced, and the rows queued before the reset are discarded with it."""
        while self.queue and self.queue.popleft()[0] != "reset":
            pass
        self._reset()
        self.get_logger().info("the bounds update in progress was given up for ~/reset")

    def _count(self, added, t: float) -> None:
        """Say what folding in the rows stamped ``t`` did beyond taking them (:class:`.Added`)."""
        if added.refused:       # the intake's checks catch these first: a bug if it happens
            self.drops.event("refused_by_estimator", added.refused)
            self.get_logger().warning(f"the estimator refused {added.refused} message(s) the intake accepted")
        if added.raised:
            self.drops.event("noise_bound_raised_to_profile", added.raised)
        if added.jumped_back:
            self.drops.event("stamp_jumped_back")
            self.get_logger().warning(f"row stamps jumped back more than {self.bounds_period:g} s "
                                      f"(to {t:.3f} s): bounds schedule restarted there")
        if added.update_failure:
            # the box keeps its last certified value; counted, the next update tries again
            self.drops.drop("solver_failed_bounds", added.update_failure)

    def _final_update(self, provisional: bool) -> str:
        """The session's final bounds update (over every row kept); its failure ('' when none)."""
        t0 = time.perf_counter()
        self.updating = True
        try:
            failure = self.session.update_bounds(final=True, provisional=provisional)
        finally:
            self.updating = False
        if failure:     # the box keeps its last certified value; counted, the next update tries again
            self.drops.drop("solver_failed_bounds", failure)
        self.get_logger().debug(f"final bounds update {time.perf_counter() - t0:.3f} s")
        return failure

    def on_excitation_status(self, msg) -> None:
        """The planner left motion (planning, executing or braking) for done or failed: the worker
        makes the final update over every row so far, its checks included."""
        if self.live.planner_status(msg.state):
            self.wake.set()

    def _idle_tick(self) -> None:
        """A timer period without any rows: the stream stopped; fold in what is left."""
        if self.live.idle_tick(self.drops.accepted):
            self.wake.set()

    def _reset(self) -> None:
        self.session = self._new_session()
        self.live.reset()
        self.last_stamp_s = self.resume_after_s = None
        if self.state_path is not None:
            remove_state(self.state_path)
        self.resets += 1
        self.drops.set_status(DiagnosticStatus.OK, f"reset to the prior box by ~/reset (reset {self.resets})")
        self.get_logger().info("estimator reset to the prior box")

    def publish(self) -> None:
        if not self.active:         # results wait for the activation
            return
        self.live.request_result()
        self.wake.set()
        while self.results:
            self.publish_one(*self.results.popleft())

    def publish_one(self, r, data_until_s: float | None, final: str = "") -> None:
        """Publish the result ``r`` (``final``: from a final update, made for this reason
        (:data:`~inertial_id.core.estimators.session.MOTION_END`, ...), which goes on /diagnostics
        as ``FINAL_ESTIMATE_REASON`` beside the estimate's stamp, ``FINAL_ESTIMATE_STAMP``)."""
        if not r.data_consistent:
            self.drops.set_status(DiagnosticStatus.WARN, r.message)
        why = prior_explanation(r.parameter_names, r.lower[:10], r.upper[:10], *self.robot.payload_prior(),
                                r.samples_used, {k: v for k, v in self.drops.counts.items() if "." not in k})
        if why and why.split(";")[0] != self.prior_said:     # said again only when other parameters are stuck
            self.get_logger().info(why)
        self.prior_said = why.split(";")[0] if why else None
        if not (np.all(np.isfinite(r.estimate)) and np.all(np.isfinite(r.lower)) and np.all(np.isfinite(r.upper))):
            self.drops.drop("non_finite_estimate", "estimate not finite yet; not published")
            self.payload_outputs.latest = None      # ~/apply takes only the newest estimate
            return
        msg = self.InertialEstimate()
        msg.header.stamp = self.get_clock().now().to_msg()
        msg.header.frame_id = self.robot.payload_frame
        msg.body = "payload"
        msg.method = r.method
        msg.parameter_names = r.parameter_names
        msg.estimate, msg.lower, msg.upper = r.estimate.tolist(), r.lower.tolist(), r.upper.tolist()
        cov = r.covariance.ravel()
        msg.covariance = cov.tolist() if np.all(np.isfinite(cov)) else []
        msg.physically_consistent = r.physically_consistent
        msg.bounds_guaranteed = r.bounds_guaranteed
        msg.offset_checked = r.offset_checked
        msg.data_consistent = r.data_consistent
        msg.samples_used = r.samples_used
        if data_until_s is not None:
            s_to_stamp(data_until_s, msg.data_stamp)
        msg.condition_number = float(r.condition_number) if np.isfinite(r.condition_number) else -1.0
        self.pub.publish(msg)
        if final:
            self.drops.values[FINAL_ESTIMATE_STAMP] = str(stamp_ns(msg.header.stamp))
            self.drops.values[FINAL_ESTIMATE_REASON] = final
        self.pub_markers.publish(marker_array(msg.header, r.estimate, r.lower, r.upper))
        self.payload_outputs.publish(r, msg.header)

    def release(self) -> None:
        """Stop the worker; once it has finished, save the state (pending rows included)."""
        if getattr(self, "worker", None) is not None:
            self.stopping.set()
            self.wake.set()
            self.worker.join(timeout=self.stop_wait_s)
            if self.worker.is_alive():      # inside an update: the state saved at the last publication stands
                self.left_running = "the worker, inside a bounds update (state as last saved)"
            else:
                self._save()
            self.worker = None
        if getattr(self, "payload_outputs", None) is not None:
            self.payload_outputs.destroy()
            self.payload_outputs = None


def main(args=None) -> int:
    return run_node(EstimatorNode, args)
