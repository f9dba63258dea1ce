"""A bounds update given up between two LPs (:mod:`inertial_id.core.estimators.interrupt`): only
inside the block, only in its thread, only once the predicate holds."""
import threading

import numpy as np
import pytest

from inertial_id.core.estimators.bounds import IntervalBounds
from inertial_id.core.estimators.interrupt import Interrupted, interruptible


def _rows(rng, x, n=200, bound=0.2):
    A = rng.standard_normal((n, x.size))
    return A, A @ x + rng.uniform(-bound, bound, n), np.full(n, bound)


def test_an_update_is_given_up_once_the_predicate_holds_and_not_before(rng):
    x = rng.standard_normal(4)
    rows = _rows(rng, x)
    asked = []

    def after_three() -> bool:
        asked.append(1)
        return len(asked) > 3

    box = IntervalBounds(x - 3, x + 3)
    with pytest.raises(Interrupted), interruptible(after_three):
        box.update(*rows)
    assert len(asked) == 4              # asked before each LP; the fourth gave up (an update is 8 LPs)
    untouched = IntervalBounds(x - 3, x + 3)
    with interruptible(lambda: False):
        assert untouched.update(*rows).consistent
    assert untouched.contains(x).all() and np.all(untouched.width < 6.0)


def test_outside_the_block_and_in_other_threads_updates_run_to_the_end(rng):
    x = rng.standard_normal(4)
    rows = _rows(rng, x)
    widths = {}

    def other_thread() -> None:
        box = IntervalBounds(x - 3, x + 3)
        box.update(*rows)
        widths["other"] = box.width

    with interruptible(lambda: True):
        worker = threading.Thread(target=other_thread)
        worker.start()
        worker.join()
    after = IntervalBounds(x - 3, x + 3)
    after.update(*rows)                  # the block has ended
    assert np.array_equal(widths["other"], after.width) and np.all(after.width < 6.0)
