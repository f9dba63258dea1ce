"""How long `inertial-id demo` waits for the planner's compiler, and what it says when the wait ends
before the compiler does."""
from types import SimpleNamespace

from inertial_id.cli import demo


def test_a_wait_that_ends_while_compiling_names_its_own_length(capsys):
    compiling = SimpleNamespace(optimizer_code=demo.STATUS_COMPILING)
    assert demo.wait_for_compiled_planner(compiling, 0.0, progress=False) == demo.STATUS_COMPILING
    assert "still compiling after 0 s" in capsys.readouterr().err
    assert demo.COMPILE_WAIT_S != 0.0
