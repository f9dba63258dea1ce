"""The planner's hottest CasADi functions as native code.

IPOPT spends most of a plan's budget in three CasADi functions evaluated by CasADi's virtual machine:
the torque screen's Jacobian, the payload rows at the cost samples and their reverse sweep (Gen3, 32
samples, measured: 7.5, 1.1 and 3.9 ms per call; compiled at ``-O1``: 0.5, 0.4 and 1.5 ms). The C
source CasADi generates for them is compiled by the system's C compiler (``$CC``, else ``cc``) in a
background thread, once per robot and planner settings (10-20 s on a quiet 2-core machine), and kept
in a cache keyed by the source's hash (``$XDG_CACHE_HOME/inertial_id/native``, else ``~/.cache``). The
compiler runs in a session of its own and puts the library in place itself, so a process that ends
first does not lose it: a 20 s MuJoCo demo on a loaded 2-core machine ended before its compiler did,
and every run started compiling again. Until the library is ready, and on a machine without a
compiler, the virtual machine's functions serve: the same arithmetic (the tests compare them), only
slower.
"""
from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import casadi as ca
import numpy as np

# -O0 compiles in 1.5 s but its screen Jacobian takes 1.6 ms, -O2 takes 14 s for no gain over -O1
FLAGS = ("-O1", "-fPIC", "-shared")
# s: a compiler that has not finished by then is abandoned (the virtual machine goes on serving)
COMPILE_TIMEOUT_S = 600.0
# the prefix of a compilation's work folder in the cache
COMPILING = "compiling-"
# NativeFunctions.status while the compiler runs (the virtual machine serves meanwhile)
STATUS_COMPILING = "compiling"


def cache_folder() -> Path:
    """Where the compiled libraries are kept."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "inertial_id" / "native"


def compiler() -> str | None:
    """The C compiler's path, or None."""
    return shutil.which(os.environ.get("CC") or "cc")


def _remove_abandoned(folder: Path) -> None:
    """Work folders older than the compile timeout: left by a process killed while it compiled."""
    for work in folder.glob(f"{COMPILING}*"):
        if time.time() - work.stat().st_mtime > COMPILE_TIMEOUT_S:
            shutil.rmtree(work, ignore_errors=True)


class NativeFunctions:
    """``functions`` compiled into one shared library, in the background; :meth:`load` gives them once
    it is there. ``status`` says which code serves and why."""

    def __init__(self, functions: Sequence[ca.Function], folder: Path | None = None, cc: str | None = None):
        generator = ca.CodeGenerator("functions.c", {"with_header": False})
        for function in functions:
            generator.add(function)
        source = generator.dump()
        self.names = [function.name() for function in functions]
        key = hashlib.sha256("\n".join((ca.CasadiMeta.version(), " ".join(FLAGS), source)).encode()).hexdigest()[:24]
        self.path = (folder or cache_folder()) / f"{key}.so"
        self.status = "compiled"
        self._done = threading.Event()
        if self.path.exists():
            self._done.set()
            return
        cc = cc or compiler()
        if cc is None:
            self.status = "virtual machine: no C compiler found ($CC or cc)"
            self._done.set()
            return
        self._start(cc, source)

    def _start(self, cc: str, source: str) -> None:
        """Start the compiler now, not in the thread: a process may end right after this."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            _remove_abandoned(self.path.parent)
            work = Path(tempfile.mkdtemp(prefix=COMPILING, dir=self.path.parent))
            (work / "functions.c").write_text(source)
            # the rename is atomic (another process may compile the same source); on failure the work
            # folder stays, with the compiler's messages, for this process to read
            script = (f'"$0" "$@" 2> log && mv -f functions.so {shlex.quote(str(self.path))} '
                      f'&& cd / && rm -rf {shlex.quote(str(work))}')
            compiler = subprocess.Popen(["sh", "-c", script, cc, *FLAGS, "functions.c", "-o", "functions.so"],
                                        cwd=work, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL, start_new_session=True)
        except OSError as error:
            self.status = f"virtual machine: compiling failed ({error})"
            self._done.set()
            return
        self.status = STATUS_COMPILING
        threading.Thread(target=self._wait_for, args=(compiler, work), daemon=True, name="native-compile").start()

    def _wait_for(self, compiler: subprocess.Popen, work: Path) -> None:
        try:
            returncode = compiler.wait(COMPILE_TIMEOUT_S)
            if returncode != 0:
                log = work / "log"
                lines = (log.read_text().strip().splitlines() if log.exists() else []) or [f"exit code {returncode}"]
                shutil.rmtree(work, ignore_errors=True)
                self.status = f"virtual machine: the C compiler failed ({lines[-1]})"
                return
            self.status = "compiled"
        except subprocess.TimeoutExpired as error:
            os.killpg(compiler.pid, signal.SIGKILL)
            self.status = f"virtual machine: compiling failed ({error})"
        finally:
            self._done.set()

    def wait(self, timeout_s: float | None = None) -> bool:
        """Wait until the compiler is done (True) or ``timeout_s`` passed (False)."""
        return self._done.wait(timeout_s)

    def load(self) -> dict[str, ca.Function] | None:
        """The compiled functions by name, or None while compiling or when the virtual machine serves."""
        if not self._done.is_set() or self.status != "compiled":
            return None
        return {name: ca.external(name, str(self.path)) for name in self.names}


def dense(function: ca.Function) -> ca.Function:
    """``function`` with dense inputs and outputs, as a numpy buffer holds them (a sparse matrix's
    buffer holds its nonzeros only)."""
    inputs = [ca.MX.sym(function.name_in(i), *function.size_in(i)) for i in range(function.n_in())]
    return ca.Function(function.name(), inputs, [ca.densify(out) for out in function.call(inputs)])


class BufferedCall:
    """``function`` called on numpy arrays it owns, column-major as CasADi stores them: no conversion
    to and from CasADi's matrices (for the rows and their reverse sweep, 24,192 numbers each way per
    call on the Gen3: about a millisecond of each IPOPT iteration). The outputs are overwritten by the
    next call."""

    def __init__(self, function: ca.Function):
        if not all(function.sparsity_in(i).is_dense() for i in range(function.n_in())) or \
                not all(function.sparsity_out(i).is_dense() for i in range(function.n_out())):
            raise ValueError(f"{function.name()}: sparse inputs or outputs (make it dense())")
        self.function = function
        self._inputs = [np.zeros(function.size_in(i), order="F") for i in range(function.n_in())]
        self._outputs = [np.zeros(function.size_out(i), order="F") for i in range(function.n_out())]
        self._buffer, self._trigger = function.buffer()
        # CasADi's stubs list a size argument its wrapper takes from the buffer itself
        for i, array in enumerate(self._inputs):
            self._buffer.set_arg(i, memoryview(array.ravel(order="K")))  # type: ignore[call-arg, arg-type]
        for i, array in enumerate(self._outputs):
            self._buffer.set_res(i, memoryview(array.ravel(order="K")))  # type: ignore[call-arg, arg-type]

    def __call__(self, *args) -> list[np.ndarray]:
        for array, value in zip(self._inputs, args):
            np.copyto(array, value)
        self._trigger()
        return self._outputs
