"""Guaranteed per-parameter intervals for the bounded-error linear model.

Model: every row satisfies ``|a_i x_true + n_i r_true - b_i| <= e_i`` (``e_i``: the row's guaranteed
error bound), where ``r`` are optional nuisance parameters known only to lie in their own box
(e.g. the robot's parameters when identifying a payload). Then ``x_true`` lies in the projection
onto ``x`` of the polytope ``{(x, r) : |A x + N r - b| <= e, x in box, r in nuisance box, G x <= g}``
(``G x <= g``: optional cuts every admissible ``x`` satisfies, or ``G [x; r] <= g``); its
per-parameter minimum and maximum (two LPs per parameter, one HiGHS model per update) enclose
``x_true``. Batches are intersected as they arrive, starting from the prior box, so the box never
widens. With ``keep_rows`` every update uses the rows received so far, which keeps the nuisance
parameters the same unknown across batches (tighter than intersecting per-batch boxes).

Bounded cost (``max_rows``): after an update only the rows that came closest to binding in its LP
solutions (smallest slack relative to their bound) are kept for the next one, at most
``max_rows``. Any subset of valid rows still encloses the truth and the box is intersected with
the previous one, so pruning only ever costs tightness, never the guarantee; rows far from binding
at every optimum are the ones least likely to matter later.

The final box (``archive_rows``): every row that entered an update is also archived, and
:meth:`IntervalBounds.final_update` solves one LP over all of them at once (the pruned rows and the
robot's parameters as one shared unknown across every batch), intersected with the running box; it
is never wider than the online box and tighter wherever pruning or batching cost something. The
archive keeps the latest ``archive_rows`` rows (any subset of valid rows stays valid).

Warm starts: each of the ``2n`` LPs starts from the optimal basis the same objective had at the
previous update (rows are tracked by identity across updates; new rows enter with their slack
basic, which keeps that basis dual feasible for the same cost, so dual simplex only repairs the few
rows that cut it off). Consecutive objectives of one update have optima far apart, so that basis
saves most of the simplex iterations. A basis with the wrong number of basic variables (a dropped
row was active) is handed to HiGHS as an alien basis, which it completes. On these degenerate LPs
(one nonzero cost) dual simplex can stall from a saved basis: past as many pivots as there are
variables the LP is solved afresh. The starting basis only changes how fast HiGHS gets there, not
what is reported: every bound is still the dual certificate of an LP that HiGHS reports optimal
(anything else keeps that bound's previous value and is counted in ``lp_failures``). The optimal
vertex may differ with the start, and with it which rows ``max_rows`` keeps, so boxes agree with a
run without warm starts only to the tightness the pruning costs; the same rows in the same
updates always give the same box.

Solver tolerance: each bound is the **dual bound** of its LP, not the primal optimum: for any row
multipliers ``y``, ``min c^T z >= sum_i min(y_i lo_i, y_i hi_i) + sum_j min(d_j l_j, d_j u_j)`` with
``d = c - M^T y`` over the row ranges ``[lo, hi]`` and the variable box ``[l, u]`` (weak duality),
so an inexact ``y`` from HiGHS only loosens the bound. It is then moved outward by
``pad_rel * (1 + |value|)`` for the rounding of that sum.

Rows whose bound depends on the parameters (``slope``): ``|A x + N r - b| <= e + S x``, a bound stated
as an affine function valid over the current box (e.g. an error proportional to the payload itself,
:func:`~..signals.acceleration_bound.acceleration_share_affine`); two one-sided rows each in the LP.
They are solved within the box they were taken over, in that update alone: never kept, held back or
archived for a later one, whose box may differ.

Rows the LP core cannot solve safely (subnormal numbers, magnitudes outside
:data:`~.row_checks.MIN_MAGNITUDE`..:data:`~.row_checks.MAX_MAGNITUDE`, non-finite) are refused with
a ``ValueError`` before they reach HiGHS.

No box from a handful of rows (``hold_until_determined``): the box stays at the prior, the rows
held back, until at least :data:`HOLD_MIN_ROWS_PER_PARAMETER` rows per parameter have arrived; then the
held rows and all that follow are used. One row, however small its stated bound, cannot move the box
(nor a few copies of it). Full column rank is deliberately not required: rows taken at rest determine
the mass and part of the first moment but never the rotational inertia, and the box they give is what
certifies holding still before the first motion. A sender that floods the topic with enough forged
rows can still move the box before real rows arrive; it then meets the real rows in the same LP,
where the contradiction turns ``data_consistent`` false (who may publish rows is the transport's
business: SROS2). At most ``HOLD_ROWS`` rows are held (the latest; any subset of valid rows is
still valid).

If a batch together with the current box has no feasible point, the data contradict the assumed
bounds: the box is left as it was, ``data_consistent`` turns false and stays false, and the rows that
must be violated are found by an elastic LP (minimum total violation) and reported.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import highspy
import numpy as np
from scipy import sparse
from scipy.optimize import linprog

from .interrupt import raise_if_interrupted
from .row_checks import unsolvable

HOLD_MIN_ROWS_PER_PARAMETER = 3
HOLD_ROWS = 3000      # as many as one bounds LP of per-sample rows takes (factory.MAX_BOUND_ROWS)
# Rows archived for the final LP (IntervalBounds.final_update), the latest kept.
FINAL_LP_ROWS = 20000


@dataclass
class BoundsUpdate:
    """Outcome of one update: whether the rows were consistent with the box, and which rows violated it by how much."""
    consistent: bool
    violating_rows: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))
    max_violation: float = 0.0


def _dual_lower_bound(c, M, row_lo, row_hi, col_lo, col_hi, y) -> float:
    """Weak-duality lower bound of ``min c^T z, row_lo <= M z <= row_hi, col_lo <= z <= col_hi``,
    valid for any ``y``. Multipliers of the wrong sign on a one-sided row (solver round-off) would
    make the bound -inf; they are set to zero, which keeps it valid."""
    y = np.where(((y > 0) & ~np.isfinite(row_lo)) | ((y < 0) & ~np.isfinite(row_hi)), 0.0, y)
    d = c - M.T @ y
    with np.errstate(invalid="ignore"):
        rows = np.minimum(y * row_lo, y * row_hi)
        cols = np.minimum(d * col_lo, d * col_hi)
    rows[y == 0] = 0.0
    cols[d == 0] = 0.0
    return float(rows.sum() + cols.sum())


_STATUS = np.array(list(highspy.HighsBasisStatus.__members__.values()), dtype=object)   # by integer code
_BASIC = int(highspy.HighsBasisStatus.kBasic)
_LOWER = int(highspy.HighsBasisStatus.kLower)
_UPPER = int(highspy.HighsBasisStatus.kUpper)
_DONE = (highspy.HighsModelStatus.kOptimal, highspy.HighsModelStatus.kInfeasible)


class _RangeLP:
    """``min c^T z  s.t.  row_lo <= M z <= row_hi,  col_lo <= z <= col_hi`` for many costs ``c``."""

    def __init__(self, M, row_lo, row_hi, col_lo, col_hi):
        self.M, self.row_lo, self.row_hi, self.col_lo, self.col_hi = M, row_lo, row_hi, col_lo, col_hi
        self.h = highspy.Highs()
        self.h.setOptionValue("output_flag", False)
        # unscaled: on these dense rows (entries 1e-8..1) HiGHS's equilibration roughly doubles the
        # simplex iterations; the bounds do not depend on it (dual certificates, checked below)
        self._scaling = self.h.getOptionValue("simplex_scale_strategy")[1]   # (status, value)
        self.h.setOptionValue("simplex_scale_strategy", 0)
        # no presolve: these LPs are dense with every row ranged, so it finds next to nothing to
        # remove, and what it costs is a fifth of an update's simplex time (bench bounds)
        self.h.setOptionValue("presolve", "off")
        # no cost perturbation: each LP has one unit cost, and perturbing it (then removing the
        # perturbation and cleaning up) costs more simplex iterations than it saves: twice as many
        # over `bench bounds --minutes 10`, 14 % more on its phase updates; a solve that stalls
        # unperturbed is repeated with HiGHS's default (minimize)
        self._perturbation = self.h.getOptionValue("dual_simplex_cost_perturbation_multiplier")[1]
        self.h.setOptionValue("dual_simplex_cost_perturbation_multiplier", 0.0)
        m, n = M.shape
        inf = highspy.kHighsInf
        # passed as arrays (a HighsLp's fields would be converted element by element), column-wise:
        # the simplex solver's own layout (row-wise costs a conversion on every new basis)
        status = self.h.passModel(
            n, m, M.size, int(highspy.MatrixFormat.kColwise), int(highspy.ObjSense.kMinimize), 0.0,
            np.zeros(n), np.where(np.isfinite(col_lo), col_lo, -inf), np.where(np.isfinite(col_hi), col_hi, inf),
            np.where(np.isfinite(row_lo), row_lo, -inf), np.where(np.isfinite(row_hi), row_hi, inf),
            np.arange(n, dtype=np.int32) * m, np.tile(np.arange(m, dtype=np.int32), n),
            np.asarray(M, dtype=float).ravel(order="F"), np.zeros(n, dtype=np.int32))
        self._refused = status == highspy.HighsStatus.kError     # then every LP counts as failed
        # HiGHS drops entries up to small_matrix_value from the matrix; with none left it has no
        # factorization to report basic variables from (getBasicVariables then crashes the process)
        small = self.h.getOptionValue("small_matrix_value")[1]
        self._has_matrix = bool(np.any(np.abs(M) > small))
        self._cols = np.arange(M.shape[1], dtype=np.int32)
        # a nonbasic variable's bound, hence its status, is known from its value unless it is fixed
        self._status_from_values = not (np.any(col_lo == col_hi) or np.any(row_lo == row_hi))
        self.iterations = 0
        self.warm_starts = 0
        self.restarts = 0

    def minimize(self, c, start=None) -> tuple[str, float]:
        """('optimal', guaranteed lower bound) | ('infeasible', nan) | ('failed', nan).
        ``start``: ``(col_status, row_status)`` integer codes of a basis to start from (else the last
        solve's). After an optimal solve, ``row_activity`` holds ``M z`` at the optimum and
        ``basis`` the optimal basis in that form."""
        if self._refused:
            return "failed", np.nan
        raise_if_interrupted()
        self.h.changeColsCost(c.size, self._cols, np.asarray(c, dtype=float))
        status, warm = self._run(start)
        if warm and status not in _DONE:
            # dual simplex can stall from a saved basis on these highly degenerate LPs (one nonzero
            # cost, often optimal at the box); past the limit, solve this LP afresh instead
            self.restarts += 1
            self.h.clearSolver()
            status, _ = self._run(None)
        if status not in _DONE:
            # stalled unperturbed, or numerical trouble unscaled: once more with HiGHS's cost
            # perturbation and scaling, without a limit, before giving up on this LP
            self.h.setOptionValue("dual_simplex_cost_perturbation_multiplier", self._perturbation)
            self.h.setOptionValue("simplex_scale_strategy", self._scaling)
            self.h.clearSolver()
            status, _ = self._run(None, limit=highspy.kHighsIInf)
            self.h.setOptionValue("dual_simplex_cost_perturbation_multiplier", 0.0)
            self.h.setOptionValue("simplex_scale_strategy", 0)
        if status == highspy.HighsModelStatus.kInfeasible:
            return "infeasible", np.nan
        if status != highspy.HighsModelStatus.kOptimal:
            return "failed", np.nan
        solution = self.h.getSolution()
        self.row_activity = np.asarray(solution.row_value)
        self.basis = self._optimal_basis(np.asarray(solution.col_value))
        y = np.asarray(solution.row_dual)
        # any multipliers give a valid bound; HiGHS's convention (c = M^T y + reduced costs) gives the
        # tight one, the opposite sign is tried only should that one fall short of the optimum
        dual_bound = lambda s: _dual_lower_bound(  # noqa: E731
            c, self.M, self.row_lo, self.row_hi, self.col_lo, self.col_hi, s * y)
        bound = dual_bound(1.0)
        optimum = self.h.getObjectiveValue()
        if not bound >= optimum - 1e-6 * (1.0 + abs(optimum)):
            bound = max(bound, dual_bound(-1.0))
        return ("optimal", bound) if np.isfinite(bound) else ("failed", np.nan)

    def _run(self, start, limit=None):
        warm = start is not None and self._set_basis(*start)
        self.warm_starts += warm
        # a warm start that needs more pivots than there are variables is worth no more than a cold
        # one; a cold solve takes about as many as there are variables, and past 20 (rows + columns) it stalls
        if limit is None:
            limit = self.M.shape[1] if warm else 20 * sum(self.M.shape)
        self.h.setOptionValue("simplex_iteration_limit", limit)
        self.h.run()
        self.iterations += int(self.h.getInfoValue("simplex_iteration_count")[1])
        return self.h.getModelStatus(), warm

    def _optimal_basis(self, x):
        """The basis of the last optimal solve as integer codes ``(col_status, row_status)``, the
        codes of ``getBasis()``. Read from the basic variables and from the bound each nonbasic
        variable sits on (HiGHS puts it there exactly): converting getBasis()'s lists of enums
        costs a sixth of the simplex time on these LPs. Whatever is not at a bound (a free
        nonbasic variable, a value moved by unscaling) or fixed takes getBasis() itself."""
        if self._status_from_values and self._has_matrix:
            cols = np.where(x == self.col_lo, _LOWER, np.where(x == self.col_hi, _UPPER, -1)).astype(np.int8)
            a = self.row_activity
            rows = np.where(a == self.row_lo, _LOWER, np.where(a == self.row_hi, _UPPER, -1)).astype(np.int8)
            status, basic = self.h.getBasicVariables()  # type: ignore[attr-defined]  # a method of the compiled Highs that highspy 1.15's stubs do not declare
            # read only what HiGHS returned: one index per row, each naming a column or a row
            if status == highspy.HighsStatus.kOk and basic.size == rows.size and \
                    (basic.size == 0 or (basic.min() >= -rows.size and basic.max() < cols.size)):
                cols[basic[basic >= 0]] = _BASIC
                rows[-1 - basic[basic < 0]] = _BASIC
                if cols.min(initial=0) >= 0 and rows.min(initial=0) >= 0:
                    return cols, rows
        basis = self.h.getBasis()
        return (np.array([v.value for v in basis.col_status], dtype=np.int8),
                np.array([v.value for v in basis.row_status], dtype=np.int8))

    def _set_basis(self, col_status, row_status) -> bool:
        basis = highspy.HighsBasis()
        basis.col_status = _STATUS[col_status].tolist()
        basis.row_status = _STATUS[row_status].tolist()
        basis.valid = True
        # one basic variable per row, or HiGHS must complete it (alien)
        basis.alien = int(np.sum(col_status == _BASIC) + np.sum(row_status == _BASIC)) != row_status.size
        if self.h.setBasis(basis) == highspy.HighsStatus.kOk:
            return True
        self.h.clearSolver()      # unusable start: solve from scratch rather than from a bad basis
        return False


class IntervalBounds:
    """Guaranteed per-parameter box of ``x``, intersected with the feasible set of each batch of bounded-error rows (module docstring)."""
    def __init__(self, lower, upper, pad_rel: float = 1e-9, nuisance_lower=None, nuisance_upper=None,
                 cuts=None, keep_rows: bool = False, max_rows: int | None = None,
                 hold_until_determined: bool = False, bound_nuisance: bool = False, archive_rows: int = 0):
        """``nuisance_lower/upper``: box of the nuisance parameters (none by default);
        ``hold_until_determined``: keep the prior until enough rows have arrived (module docstring);
        ``cuts``: ``(G, g)`` with ``G x <= g`` for every admissible ``x`` (or ``G [x; r] <= g``
        when ``G`` also has the nuisance columns);
        ``keep_rows``: solve each update over the rows so far, not only the new batch;
        ``max_rows``: with ``keep_rows``, keep at most this many (the nearest to binding);
        ``bound_nuisance``: the nuisance parameters are constants of the run (a sensor offset), so each
        update also narrows their box (two more LPs each), which the next update starts from;
        ``archive_rows``: archive up to this many of the latest rows for :meth:`final_update`."""
        if max_rows is not None and max_rows < 1:
            raise ValueError("max_rows must be at least 1")
        self.max_rows = max_rows
        self.lower = np.asarray(lower, dtype=float).copy()
        self.upper = np.asarray(upper, dtype=float).copy()
        if self.lower.shape != self.upper.shape or np.any(self.lower > self.upper):
            raise ValueError("prior box needs lower <= upper, same sizes")
        self.r_lower = np.zeros(0) if nuisance_lower is None else np.asarray(nuisance_lower, dtype=float)
        self.r_upper = np.zeros(0) if nuisance_upper is None else np.asarray(nuisance_upper, dtype=float)
        if self.r_lower.shape != self.r_upper.shape or np.any(self.r_lower > self.r_upper):
            raise ValueError("nuisance box needs lower <= upper, same sizes")
        n = self.lower.size
        G, g = (np.zeros((0, n)), np.zeros(0)) if cuts is None else \
            (np.atleast_2d(np.asarray(cuts[0], dtype=float)), np.asarray(cuts[1], dtype=float))
        if G.shape[1] == n:
            G = np.hstack([G, np.zeros((G.shape[0], self.r_lower.size))])
        if G.shape != (g.size, n + self.r_lower.size):
            raise ValueError("cuts (G, g) need one bound per row and a column per parameter")
        self.cuts = (G, g)
        self.pad_rel = pad_rel
        self.keep_rows = keep_rows
        self.bound_nuisance = bound_nuisance
        self._kept = (np.zeros((0, n + self.r_lower.size)), np.zeros(0), np.zeros(0))
        # identity of each kept row, and the optimal basis of each objective (k, sign) at the last
        # update: (row ids, column status, row status); warm starts only
        self._kept_ids = np.zeros(0, dtype=np.int64)
        self._next_id = 0
        self._bases: dict = {}
        # simplex iterations, LPs started from a saved basis, those solved afresh after it stalled, and
        # LPs HiGHS did not solve to optimality (their bound kept its previous value)
        self.lp_iterations = self.lp_warm_starts = self.lp_restarts = self.lp_failures = 0
        self.data_consistent = True
        self.rows_used = 0
        # the rows held back while too few have arrived (hold_until_determined), and how many came
        self.determined = not hold_until_determined
        self._held_total = 0
        self._held: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
        self.archive_rows = archive_rows
        self._archive: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.nuisance_prior = (self.r_lower.copy(), self.r_upper.copy())

    @property
    def width(self) -> np.ndarray:
        """Per-parameter width of the box, ``upper - lower``."""
        return self.upper - self.lower

    def contains(self, x) -> np.ndarray:
        """Per-parameter bool: ``x`` inside the box."""
        x = np.asarray(x, dtype=float)
        return (x >= self.lower) & (x <= self.upper)

    def update(self, A, b, e, A_nuisance=None, slope=None) -> BoundsUpdate:
        """Intersect the box with the polytope of one batch of rows ``|A x + A_nuisance r - b| <= e``,
        the bound ``e + slope x`` with a ``slope`` (none by default; module docstring)."""
        A = np.atleast_2d(np.asarray(A, dtype=float))
        b = np.asarray(b, dtype=float).ravel()
        e = np.asarray(e, dtype=float).ravel()
        N = np.zeros((b.size, self.r_lower.size)) if A_nuisance is None else \
            np.atleast_2d(np.asarray(A_nuisance, dtype=float))
        if N.shape != (b.size, self.r_lower.size):
            raise ValueError(f"nuisance rows must be {b.size} x {self.r_lower.size}")
        if np.any(e < 0) or not all(np.all(np.isfinite(v)) for v in (A, N, b, e)):
            raise ValueError("rows and bounds must be finite, bounds non-negative")
        bad = unsolvable(np.hstack([A, N]), b, e)
        if bad:
            raise ValueError(f"rows refused ({bad[0]}): {bad[1]}")
        if slope is not None:
            S = np.atleast_2d(np.asarray(slope, dtype=float))
            if S.shape != A.shape or not np.all(np.isfinite(S)):
                raise ValueError(f"a bound's slope must be finite, {A.shape[0]} x {A.shape[1]}")
            if self.keep_rows or self.archive_rows or not self.determined:
                raise ValueError("rows with a sloped bound hold in this box only: not on bounds that keep, "
                                 "archive or hold rows")
            return self._sloped(np.hstack([A, N]), b, e, np.hstack([S, np.zeros_like(N)]))
        if not self.determined:
            A, N, b, e = self._hold(A, N, b, e)
            if not self.determined:
                return BoundsUpdate(True)
        M = np.hstack([A, N])
        ids = np.arange(self._next_id, self._next_id + b.size)
        self._next_id += b.size
        if self.keep_rows:
            M_all = np.vstack([self._kept[0], M])
            b_all, e_all = np.concatenate([self._kept[1], b]), np.concatenate([self._kept[2], e])
            ids_all = np.concatenate([self._kept_ids, ids])
        else:
            M_all, b_all, e_all, ids_all = M, b, e, ids
        solved = self._solve(M_all, b_all, e_all, ids_all)
        if isinstance(solved, BoundsUpdate):
            return solved
        slack = solved
        self._archive_rows(M, b, e)
        if self.keep_rows:
            if self.max_rows is not None and b_all.size > self.max_rows:
                keep = np.sort(np.argsort(slack, kind="stable")[:self.max_rows])
                M_all, b_all, e_all, ids_all = M_all[keep], b_all[keep], e_all[keep], ids_all[keep]
            self._kept = (M_all, b_all, e_all)
            self._kept_ids = ids_all
        self.rows_used += b.size
        return BoundsUpdate(True)

    def _sloped(self, M, b, e, S) -> BoundsUpdate:
        """:meth:`update` of rows with a sloped bound (module docstring)."""
        solved = self._solve(M, b, e, None, slope=S)
        if isinstance(solved, BoundsUpdate):
            return solved
        self.rows_used += b.size
        return BoundsUpdate(True)

    def _solve(self, M_all, b_all, e_all, ids_all, slope=None):
        """Narrow the box (and, with ``bound_nuisance``, the nuisance box) to the per-parameter minima
        and maxima over ``|M_all z - b_all| <= e_all`` (``+ slope z``: :meth:`_sloped`, two one-sided
        rows each, solved without a warm start): each row's smallest relative slack over the optimal
        points, or the :class:`BoundsUpdate` of a contradiction."""
        n = self.lower.size
        if slope is None:
            rows, row_lo, row_hi = M_all, b_all - e_all, b_all + e_all
        else:
            inf = np.full(b_all.size, np.inf)
            rows = np.vstack([M_all - slope, M_all + slope])
            row_lo, row_hi = np.concatenate([-inf, b_all - e_all]), np.concatenate([b_all + e_all, inf])
        lp = self._range_lp(rows, row_lo, row_hi)
        M_lp = lp.M
        new_lo = np.concatenate([self.lower, self.r_lower])
        new_hi = np.concatenate([self.upper, self.r_upper])
        bases = {}
        # smallest slack of each row over the optimal points, relative to its bound
        slack = np.full(b_all.size, np.inf)
        for k in range(n + (self.r_lower.size if self.bound_nuisance else 0)):
            for sign in (1.0, -1.0):
                c = np.zeros(M_lp.shape[1])
                c[k] = sign
                status, value = lp.minimize(c, None if ids_all is None else self._start((k, sign), ids_all))
                if status == "infeasible":   # the data break the assumed bounds
                    self._count(lp)
                    return self._inconsistent(M_all, b_all, e_all, slope)
                if status != "optimal":
                    self.lp_failures += 1
                    self._bases.pop((k, sign), None)
                    continue                 # no certificate from this LP: keep the old bound
                if ids_all is not None:
                    bases[(k, sign)] = (ids_all, *lp.basis)
                    residual = np.abs(lp.row_activity[:b_all.size] - b_all)
                    slack = np.minimum(slack, (e_all - residual) / np.maximum(e_all, 1e-300))
                value = sign * value
                pad = self.pad_rel * (1.0 + abs(value))
                if sign > 0:
                    new_lo[k] = max(new_lo[k], value - pad)
                else:
                    new_hi[k] = min(new_hi[k], value + pad)
        new_hi = np.maximum(new_hi, new_lo)
        self.lower, self.upper = new_lo[:n], new_hi[:n]
        self.r_lower, self.r_upper = new_lo[n:], new_hi[n:]
        self._count(lp)
        self._bases.update(bases)
        return slack

    def _archive_rows(self, M, b, e) -> None:
        if not self.archive_rows:
            return
        self._archive.append((M, b, e))
        archived = sum(part[1].size for part in self._archive)
        while archived - self._archive[0][1].size >= self.archive_rows:
            archived -= self._archive.pop(0)[1].size

    @property
    def archived_rows(self) -> int:
        """How many rows :meth:`final_update` would solve over."""
        return sum(part[1].size for part in self._archive)

    def archive(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """``(M, b, e)`` of the archived rows (``M = [A, A_nuisance]``), None when there are none."""
        if not self._archive:
            return None
        M, b, e = (np.concatenate([part[i] for part in self._archive]) for i in range(3))
        return M, b, e

    def final_update(self) -> BoundsUpdate:
        """One LP over every archived row (module docstring), intersected with the box."""
        rows = self.archive()
        if rows is None or not self.data_consistent:
            return BoundsUpdate(self.data_consistent)
        M, b, e = rows
        self._bases = {}            # a basis of the pruned rows is no start for all of them
        solved = self._solve(M, b, e, np.arange(b.size))
        self._bases = {}
        return solved if isinstance(solved, BoundsUpdate) else BoundsUpdate(True)

    def _range_lp(self, rows, row_lo, row_hi) -> _RangeLP:
        """The LP over ``row_lo <= rows z <= row_hi``, the cuts, the box and the nuisance box."""
        G, g = self.cuts
        return _RangeLP(np.vstack([rows, G]), np.concatenate([row_lo, np.full(g.size, -np.inf)]), np.concatenate([row_hi, g]),
                        np.concatenate([self.lower, self.r_lower]), np.concatenate([self.upper, self.r_upper]))

    def support(self, C) -> np.ndarray:
        """For each row ``c`` of ``C`` (k, parameters): an upper bound of ``c . x`` over every ``x``
        that the archived rows (without an archive: the kept rows), the cuts and the boxes admit, the
        feasible set of :meth:`final_update`'s LP, which holds the truth whenever the rows' bounds do.
        Each bound is a dual certificate (as the box's), and never above the box's own ``sum max(c
        lower, c upper)``, which it stays where an LP gives none (inconsistent rows, a failed LP)."""
        C = np.atleast_2d(np.asarray(C, dtype=float))
        out = np.maximum(C * self.lower, C * self.upper).sum(axis=1)
        M, b, e = self.archive() or self._kept
        if b.size == 0 or not self.data_consistent:
            return out
        lp = self._range_lp(M, b - e, b + e)
        for k, c in enumerate(C):
            status, value = lp.minimize(np.concatenate([-c, np.zeros(self.r_lower.size)]))
            if status == "optimal":
                out[k] = min(out[k], -value + self.pad_rel * (1.0 + abs(value)))
        self._count(lp)
        return out

    def _hold(self, A, N, b, e):
        """Hold the rows back until enough have arrived; then all held rows."""
        self._held.append((A, N, b, e))
        self._held_total += b.size
        held = sum(h[2].size for h in self._held)
        while held > HOLD_ROWS and len(self._held) > 1:
            held -= self._held.pop(0)[2].size
        self.determined = self._held_total >= HOLD_MIN_ROWS_PER_PARAMETER * self.lower.size
        if not self.determined:
            return A, N, b, e
        parts, self._held = self._held, []
        return tuple(np.concatenate([p[i] for p in parts]) for i in range(4))

    def _count(self, lp: _RangeLP) -> None:
        self.lp_iterations += lp.iterations
        self.lp_warm_starts += lp.warm_starts
        self.lp_restarts += lp.restarts

    def _start(self, objective, ids):
        """The basis ``objective`` had at its last optimum, on the rows ``ids`` (then the cut rows):
        rows it did not have enter with their slack basic. None the first time, or when it shares no
        row with this LP (without ``keep_rows``)."""
        saved = self._bases.get(objective)
        if saved is None:
            return None
        old_ids, col_status, row_status = saved
        n_data = old_ids.size
        pos = np.searchsorted(old_ids, ids)          # ids increase along the rows
        known = (pos < n_data) & (old_ids[np.minimum(pos, n_data - 1)] == ids) if n_data else np.zeros(ids.size, bool)
        if not known.any():
            return None
        rows = np.full(ids.size, _BASIC, dtype=np.int8)
        rows[known] = row_status[pos[known]]
        return col_status, np.concatenate([rows, row_status[n_data:]])

    @property
    def kept_rows(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(M, b, e)`` of the rows the next update reuses (``M = [A, A_nuisance]``)."""
        return self._kept

    def restore(self, lower, upper, data_consistent: bool, rows_used: int, kept=None, determined=None) -> None:
        """Set the state saved from an earlier instance (same prior, nuisance box and cuts).
        ``determined``: whether enough rows had arrived to leave the prior (default: whether the box
        left the prior)."""
        lower, upper = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
        if lower.shape != self.lower.shape or upper.shape != self.upper.shape:
            raise ValueError("saved box has another number of parameters")
        if np.any(np.isnan(lower)) or np.any(np.isnan(upper)) or np.any(lower > upper):
            raise ValueError("saved box is not ordered or has NaN bounds")
        if not self.determined:
            self.determined = bool(determined) if determined is not None else \
                bool(np.any(lower > self.lower) or np.any(upper < self.upper))
        # never wider than this instance's prior
        self.lower, self.upper = np.maximum(self.lower, lower), np.minimum(self.upper, upper)
        self.upper = np.maximum(self.upper, self.lower)
        self.data_consistent = bool(data_consistent)
        self.rows_used = int(rows_used)
        if kept is not None:
            M, b, e = (np.asarray(x, dtype=float) for x in kept)
            if M.ndim != 2 or M.shape[1] != self._kept[0].shape[1] or b.shape != e.shape or b.size != M.shape[0]:
                raise ValueError("saved rows do not match the parameter and nuisance columns")
            self._kept = (M, b.ravel(), e.ravel())
            self._kept_ids = np.arange(self._next_id, self._next_id + b.size)
            self._next_id += b.size
            self._bases = {}

    def _inconsistent(self, M, b, e, slope=None) -> BoundsUpdate:
        """Elastic LP over the rows ``|M z - b| <= e`` (``+ slope z``; ``z = [x, r]``); row indices
        count from the first kept row when ``keep_rows``."""
        m, n = M.shape
        S = np.zeros_like(M) if slope is None else slope
        # variables [z (n), s (m)]: minimise sum s subject to |M z - b| <= e + S z + s, z in boxes, s >= 0
        # (sparse: the slack block is an identity, dense it would be m x m)
        c = np.concatenate([np.zeros(n), np.ones(m)])
        I = sparse.identity(m, format="csr")
        G, g = self.cuts
        A_ub = sparse.vstack([sparse.hstack([M - S, -I]), sparse.hstack([-M - S, -I]),
                              sparse.hstack([G, sparse.csr_matrix((G.shape[0], m))])], format="csr")
        b_ub = np.concatenate([b + e, e - b, g])
        bounds = list(zip(np.concatenate([self.lower, self.r_lower]),
                          np.concatenate([self.upper, self.r_upper]))) + [(0, None)] * m
        res = linprog(c, A_ub=A_ub, b_ub=b_ub, bounds=bounds, method="highs")
        self.data_consistent = False
        if res.status != 0:
            return BoundsUpdate(False)
        s = res.x[n:]
        rows = np.flatnonzero(s > 1e-9 * (1 + np.abs(b)))
        return BoundsUpdate(False, rows, float(s.max(initial=0.0)))
