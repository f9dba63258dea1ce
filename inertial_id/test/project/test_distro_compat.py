"""Only inertial_id/nodes/compat.py knows how rclpy differs between distributions: no other module
of the package imports an rclpy module or name that Humble's rclpy lacks, uses a message-info field
Humble and Jazzy lack, or subscribes with a callback taking a second parameter (message info: Humble
never passes it). ROS-free: the sources are read with ``ast``."""
import ast

from paths import SOURCES

COMPAT = "nodes/compat.py"

# --- Facts about Humble's rclpy, read from github.com/ros2/rclpy, branch humble (3.3.15, commit
# b488272b), and the measured differences in ../shared/spec/ros_distros.md.
# Every module: `git ls-tree -r --name-only humble rclpy/rclpy` (each .py file; __init__.py stands for
# its package). Jazzy and Kilted have all of these; they add rclpy.event_handler, rclpy.experimental
# (Jazzy from 7.1.4), rclpy.clock_type, rclpy.parameter_client and more.
HUMBLE_MODULES = frozenset("""
rclpy rclpy.action rclpy.action.client rclpy.action.graph rclpy.action.server rclpy.callback_groups
rclpy.client rclpy.clock rclpy.constants rclpy.context rclpy.duration rclpy.exceptions rclpy.executors
rclpy.expand_topic_name rclpy.guard_condition rclpy.impl rclpy.impl.implementation_singleton
rclpy.impl.logging_severity rclpy.impl.rcutils_logger rclpy.lifecycle rclpy.lifecycle.managed_entity
rclpy.lifecycle.node rclpy.lifecycle.publisher rclpy.logging rclpy.node rclpy.parameter
rclpy.parameter_service rclpy.publisher rclpy.qos rclpy.qos_event rclpy.qos_overriding_options
rclpy.serialization rclpy.service rclpy.signals rclpy.subscription rclpy.task rclpy.time
rclpy.time_source rclpy.timer rclpy.topic_endpoint_info rclpy.topic_or_service_is_hidden
rclpy.type_support rclpy.utilities rclpy.validate_full_topic_name rclpy.validate_namespace
rclpy.validate_node_name rclpy.validate_parameter_name rclpy.validate_topic_name
rclpy.wait_for_message rclpy.waitable
""".split())
# Humble's home of a class that moved later: jazzy's rclpy/qos_event.py warns on import ("deprecated;
# import 'event_handler' instead"), so only compat may import it
MOVED_LATER = {"rclpy.qos_event": "rclpy.event_handler from Iron on"}
# Names the package takes from rclpy modules, each found at module level in the humble branch's file
# named (a name not listed fails: look it up there, then add it)
HUMBLE_NAMES = {
    # rclpy/__init__.py: def init, shutdown, create_node, spin_once, spin, spin_until_future_complete;
    # ok and try_shutdown imported from rclpy.utilities
    "rclpy": {"init", "shutdown", "try_shutdown", "ok", "create_node", "spin", "spin_once",
              "spin_until_future_complete"},
    "rclpy.action": {"ActionClient"},                                  # action/__init__.py (from .client)
    "rclpy.callback_groups": {"MutuallyExclusiveCallbackGroup", "ReentrantCallbackGroup"},
    "rclpy.clock": {"Clock", "ClockType", "ROSClock"},                  # ClockType = _rclpy.ClockType
    "rclpy.duration": {"Duration"},
    "rclpy.exceptions": {"ParameterException"},
    # executors.py; also the private parts QueueOnceExecutor overrides or uses: _spin_once_impl(timeout_sec,
    # wait_condition), self._executor (ThreadPoolExecutor), self._futures
    "rclpy.executors": {"ConditionReachedException", "ExternalShutdownException", "MultiThreadedExecutor",
                        "ShutdownException", "SingleThreadedExecutor", "TimeoutException"},
    "rclpy.lifecycle": {"LifecycleNode", "TransitionCallbackReturn"},  # lifecycle/__init__.py
    "rclpy.logging": {"get_logger"},
    "rclpy.node": {"Node"},
    "rclpy.qos": {"DurabilityPolicy", "HistoryPolicy", "QoSProfile", "ReliabilityPolicy"},
    # signals.py re-exports _rclpy.SignalHandlerOptions (src/rclpy/signal_handler.cpp: ALL, NO, SIGINT,
    # SIGTERM); rclpy.init takes signal_handler_options on humble too
    "rclpy.signals": {"SignalHandlerOptions"},
}
# Attributes and message-info keys Humble lacks. publisher_gid: humble's src/rclpy/subscription.cpp
# (take_message) fills the info with source_timestamp and received_timestamp only, and executors.py
# calls a subscription callback with the message alone; Jazzy's info has no publisher_gid either
# (timestamps and sequence numbers), Kilted's has (ros2/rclpy#1466). get_publisher_count: jazzy's
# subscription.py has Subscription.get_publisher_count, humble's not.
HUMBLE_LACKS = {"publisher_gid": "per-message publisher identity (Kilted only)",
                "get_publisher_count": "Subscription.get_publisher_count (Jazzy on)"}


def _parents(tree) -> dict:
    return {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def _enclosing(node, parents, kinds):
    while node in parents:
        node = parents[node]
        if isinstance(node, kinds):
            return node
    return None


class _Package:
    """The parsed modules (path -> tree) and their classes by name, for following callbacks."""

    def __init__(self, sources: dict):
        self.trees = {path: ast.parse(text, path) for path, text in sources.items()}
        self.parents = {path: _parents(tree) for path, tree in self.trees.items()}
        self.classes: dict = {}
        for tree in self.trees.values():
            for node in ast.walk(tree):
                if isinstance(node, ast.ClassDef):
                    self.classes.setdefault(node.name, []).append(node)

    def method(self, cls: ast.ClassDef, name: str, seen=None):
        """The def of ``name`` on ``cls`` or, by the bases' simple names, a base class of the package."""
        seen = set() if seen is None else seen
        if id(cls) in seen:
            return None
        seen.add(id(cls))
        for node in cls.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
                return node
        for base in cls.bases:
            base_name = base.id if isinstance(base, ast.Name) else getattr(base, "attr", None)
            for candidate in self.classes.get(base_name, []):
                found = self.method(candidate, name, seen)
                if found is not None:
                    return found
        return None

    def function(self, path: str, at, name: str):
        """The def called ``name`` visible at node ``at``: nested in an enclosing function, or in the module."""
        scope = _enclosing(at, self.parents[path], (ast.FunctionDef, ast.AsyncFunctionDef))
        while scope is not None:
            for node in ast.walk(scope):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name \
                        and node is not scope:
                    return node
            scope = _enclosing(scope, self.parents[path], (ast.FunctionDef, ast.AsyncFunctionDef))
        for node in self.trees[path].body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
                return node
        return None

    def callable_def(self, path: str, expr):
        """(def or lambda, bound) that ``expr`` names; (None, False) for what is not the package's
        (a method of another object, e.g. ``list.append``); raises LookupError when it should be but
        cannot be found."""
        if isinstance(expr, ast.Lambda):
            return expr, False
        if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == "self":
            cls = _enclosing(expr, self.parents[path], ast.ClassDef)
            found = self.method(cls, expr.attr) if cls is not None else None
            if found is None:
                raise LookupError(f"self.{expr.attr}")
            return found, True
        if isinstance(expr, ast.Name):
            found = self.function(path, expr, expr.id)
            if found is None:
                raise LookupError(expr.id)
            return found, False
        if isinstance(expr, ast.Attribute):
            return None, False
        raise LookupError(ast.unparse(expr))

    def callbacks(self, path: str, expr) -> list:
        """[(def or lambda, bound)] that the callback expression ``expr`` stands for; a call is followed
        to the nested defs its function returns."""
        if not isinstance(expr, ast.Call):
            found, bound = self.callable_def(path, expr)
            return [] if found is None else [(found, bound)]
        factory, _ = self.callable_def(path, expr.func)
        if factory is None or isinstance(factory, ast.Lambda):
            raise LookupError(ast.unparse(expr))
        nested = {n.name: n for n in ast.walk(factory)
                  if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n is not factory}
        returned = [nested[n.value.id] for n in ast.walk(factory) if isinstance(n, ast.Return)
                    and isinstance(n.value, ast.Name) and n.value.id in nested]
        if not returned:
            raise LookupError(ast.unparse(expr))
        return [(r, False) for r in returned]


def _callback_problem(fn, bound: bool) -> str:
    params = [*fn.args.posonlyargs, *fn.args.args][1 if bound else 0:]
    required = len(params) - len(fn.args.defaults)
    if len(params) >= 2:
        return (f"takes {len(params)} parameters ({', '.join(p.arg for p in params)}): message info is "
                f"passed from Jazzy on only, Humble calls with the message alone")
    if required == 0 and not params and fn.args.vararg is None:
        return "takes no parameter: it is called with the message"
    return ""


def problems(sources: dict, skip=(COMPAT,)) -> tuple[list, int]:
    """(``path:line what`` of every use of an rclpy API Humble lacks outside ``skip``, the number of
    subscription callbacks examined). ``sources``: path (relative to the package) -> text."""
    pkg = _Package(sources)
    found, examined = [], 0
    for path, tree in pkg.trees.items():
        if path in skip:
            continue

        def report(node, what):
            found.append(f"{path}:{node.lineno} {what}")

        def check_module(node, module: str, names=()):
            if module not in HUMBLE_MODULES:
                report(node, f"{module}: no such module on Humble")
                return
            if module in MOVED_LATER:
                report(node, f"{module}: deprecated later ({MOVED_LATER[module]}); use compat")
                return
            for name in names:
                if name == "*" or f"{module}.{name}" in HUMBLE_MODULES:
                    continue
                if name not in HUMBLE_NAMES.get(module, ()):
                    report(node, f"{module}.{name}: not checked on Humble's rclpy (find it in the humble "
                                 f"branch, then add it to HUMBLE_NAMES)")

        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name == "rclpy" or alias.name.startswith("rclpy."):
                        check_module(node, alias.name)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and \
                    (node.module == "rclpy" or node.module.startswith("rclpy.")):
                check_module(node, node.module, [a.name for a in node.names])
            elif isinstance(node, ast.Attribute):
                if isinstance(node.value, ast.Name) and node.value.id == "rclpy" and \
                        node.attr not in HUMBLE_NAMES["rclpy"] and f"rclpy.{node.attr}" not in HUMBLE_MODULES:
                    report(node, f"rclpy.{node.attr}: not on Humble's rclpy")
                if node.attr in HUMBLE_LACKS:
                    report(node, f".{node.attr}: {HUMBLE_LACKS[node.attr]}")
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in HUMBLE_LACKS:
                report(node, f"'{node.value}': {HUMBLE_LACKS[node.value]}")
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                    node.func.attr == "create_subscription":
                expr = node.args[2] if len(node.args) > 2 else \
                    next((k.value for k in node.keywords if k.arg == "callback"), None)
                if expr is None:
                    continue
                try:
                    targets = pkg.callbacks(path, expr)
                except LookupError as exc:
                    report(node, f"subscription callback {exc} not found in the package: check it by hand")
                    continue
                for fn, bound in targets:
                    examined += 1
                    why = _callback_problem(fn, bound)
                    if why:
                        report(node, f"subscription callback {ast.unparse(expr)} {why}")
    return found, examined


def package_sources() -> dict:
    return {str(p.relative_to(SOURCES)): p.read_text() for p in sorted(SOURCES.rglob("*.py"))}


def test_no_api_missing_on_humble_outside_compat():
    found, examined = problems(package_sources())
    assert not found, "rclpy APIs Humble lacks, used outside nodes/compat.py:\n" + "\n".join(found)
    assert examined >= 15, f"only {examined} subscription callbacks examined: the walk missed some"


def test_compat_module_exists_and_is_the_exception():
    assert (SOURCES / COMPAT).is_file()
    # compat itself reaches the distribution-specific modules (that is its job)
    found, _ = problems({COMPAT: (SOURCES / COMPAT).read_text()}, skip=())
    assert any("rclpy.event_handler" in f for f in found) and any("rclpy.experimental" in f for f in found)


def test_the_check_finds_each_kind_of_use():
    bad = '''
import rclpy
import rclpy.experimental
from rclpy.event_handler import SubscriptionEventCallbacks
from rclpy.qos_event import QoSEventHandler
from rclpy.executors import EventsExecutor


def on_two(msg, info):
    pass


def factory():
    def write(msg, info=None):
        pass
    return write


class N:
    def setup(self):
        self.create_subscription(int, "a", self.on_msg, 10)
        self.create_subscription(int, "b", lambda m, i: None, 10)
        self.create_subscription(int, "c", on_two, 10)
        self.create_subscription(int, "d", factory(), 10)
        self.create_subscription(int, "e", self.on_fine, 10)
        self.create_subscription(int, "f", callback=self.missing, qos_profile=10)
        rclpy.experimental.EventsExecutor()

    def on_msg(self, msg, info):
        return info["publisher_gid"], info.publisher_gid

    def on_fine(self, msg):
        pass
'''
    found, examined = problems({"bad.py": bad})
    text = "\n".join(found)
    for line, what in [(3, "rclpy.experimental: no such module"), (4, "rclpy.event_handler: no such module"),
                       (5, "rclpy.qos_event: deprecated later"), (6, "rclpy.executors.EventsExecutor: not checked"),
                       (21, "callback self.on_msg takes 2"), (22, "callback lambda m, i: None takes 2"),
                       (23, "callback on_two takes 2"), (24, "callback factory() takes 2"),
                       (26, "callback self.missing not found"), (27, "rclpy.experimental: not on Humble"),
                       (30, "'publisher_gid'"), (30, ".publisher_gid")]:
        assert any(f.startswith(f"bad.py:{line} ") and what in f for f in found), f"line {line} {what}:\n{text}"
    assert examined == 5 and len(found) == 12, text
