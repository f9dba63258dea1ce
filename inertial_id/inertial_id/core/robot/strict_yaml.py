"""YAML as configuration files need it: safe types only, and a key given twice in one mapping is an
error (plain YAML loaders keep the last value silently, so a profile with ``name`` twice, or two
``torque:`` lines, would run with whichever came last)."""
from __future__ import annotations

from typing import Any

import yaml
from yaml.constructor import ConstructorError

_Base: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)    # the C loader where libyaml is built in


class UniqueKeyLoader(_Base):
    """Safe loader refusing duplicate keys (merge keys ``<<`` excepted)."""

    def construct_mapping(self, node, deep=False):
        """The mapping of ``node``; a ConstructorError on a duplicate key."""
        if isinstance(node, yaml.MappingNode):
            first: dict = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.construct_object(key_node, deep=True)
                try:
                    seen = key in first
                except TypeError:          # an unhashable key: the base constructor reports it
                    continue
                if seen:
                    raise ConstructorError(None, None, f"duplicate key '{key}' (line {key_node.start_mark.line + 1}, "
                                                       f"first on line {first[key] + 1})", key_node.start_mark)
                first[key] = key_node.start_mark.line
        return super().construct_mapping(node, deep)


def load(stream):
    """Parse one YAML document (text or file) with :class:`UniqueKeyLoader`."""
    return yaml.load(stream, Loader=UniqueKeyLoader)
