# Sphinx configuration of the inertial_id docs: `make docs` (warnings are errors), or rosdoc2, which
# finds this file in docs/ and runs it inside its own configuration. Plain Sphinx, no network at build
# time: the built-in alabaster theme, autodoc, and this folder's own extension (_ext/inertial_id_docs.py:
# the CLI reference from the argparse parser, the API reference from the package's module tree).
import sys
import xml.etree.ElementTree as ET
from pathlib import Path


def _docs_dir() -> Path:
    """This folder, also when another configuration executes this file (rosdoc2 wraps it)."""
    candidates = [Path(globals().get("__file__", "conf.py")).resolve().parent, Path.cwd()]
    try:
        import inertial_id
        candidates.append(Path(inertial_id.__path__[0]).resolve().parent / "docs")
    except ImportError:
        pass
    return next(c for c in candidates if (c / "_ext" / "inertial_id_docs.py").is_file())


DOCS = _docs_dir()
sys.path.insert(0, str(DOCS / "_ext"))
sys.path.insert(1, str(DOCS.parent / "inertial_id"))    # the source tree, when the package is not installed

_package = ET.parse(DOCS.parent / "inertial_id" / "package.xml").getroot()
project = "inertial_id"
author = "the inertial_id maintainers"
copyright = "the inertial_id maintainers"
release = version = _package.findtext("version")

extensions = ["sphinx.ext.autodoc", "inertial_id_docs"]
root_doc = "index"
exclude_patterns = ["_build", "_ext"]
templates_path = []
html_static_path = []
html_theme = "alabaster"
html_theme_options = {"description": "inertial parameters of robots and payloads, with guaranteed bounds",
                      "fixed_sidebar": True}
html_title = f"inertial_id {release}"
html_show_sourcelink = False

# The API reference: members in source order, as the modules state them.
autodoc_default_options = {"members": True}
autodoc_member_order = "bysource"
autodoc_class_signature = "separated"
# A short cross-reference such as :mod:`.pmd` may match two modules of the tree (inertial_id.core.pmd
# and a study's module of the same last name); Sphinx then links the first and says so. Only that
# message is silenced; a reference that matches nothing is not reported either way (nitpicky is off).
suppress_warnings = ["ref.python"]
