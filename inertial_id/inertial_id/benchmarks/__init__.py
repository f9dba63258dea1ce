"""Benchmarks run by ``inertial-id bench NAME``. Each module has ``add_arguments(parser)`` and
``run(args) -> dict`` (the JSON report). Speed claims compare ratios measured inside one run."""

BENCHMARKS = ("regressor", "identifiability", "pmd", "identify", "bounds", "planner", "builder", "commands",
              "estimate")
