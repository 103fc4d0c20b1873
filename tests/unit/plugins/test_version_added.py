"""Every version_added in the plugins' documentation names a release that happened or the next one.

A plugin listed in a release says that release; anything newer says the next
minor version after galaxy.yml's (its notes wait in changelogs/fragments/).
"""
import ast
import glob
import os

import pytest
import yaml

ROOT = os.path.join(os.path.dirname(__file__), "..", "..", "..")


def load(relative):
    with open(os.path.join(ROOT, relative), encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def documentation(path):
    """A plugin's DOCUMENTATION: the module constant, or the key of a filter's .yml file."""
    if path.endswith(".yml"):
        with open(path, encoding="utf-8") as handle:
            return yaml.safe_load(handle)["DOCUMENTATION"]
    with open(path, encoding="utf-8") as handle:
        tree = ast.parse(handle.read())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "DOCUMENTATION" for t in node.targets):
            return yaml.safe_load(node.value.value)
    return None


def versions_added(doc, where=""):
    if isinstance(doc, dict):
        for key, value in doc.items():
            if key == "version_added":
                yield where or "(plugin)", str(value)
            else:
                yield from versions_added(value, "%s.%s" % (where, key) if where else str(key))
    elif isinstance(doc, list):
        for item in doc:
            yield from versions_added(item, where)


RELEASES = load("changelogs/changelog.yaml")["releases"]
CURRENT = str(load("galaxy.yml")["version"])
_MAJOR, _MINOR = CURRENT.split(".")[:2]
NEXT = "%s.%d.0" % (_MAJOR, int(_MINOR) + 1)
RELEASED_IN = {}
for _version, _release in RELEASES.items():
    for _name in [m["name"] for m in _release.get("modules", [])] + [
            p["name"] for kind in _release.get("plugins", {}).values() for p in kind]:
        RELEASED_IN.setdefault(_name, _version)
PLUGINS = sorted(
    p for p in glob.glob(os.path.join(ROOT, "plugins", "modules", "*.py"))
    + glob.glob(os.path.join(ROOT, "plugins", "lookup", "*.py"))
    + glob.glob(os.path.join(ROOT, "plugins", "filter", "*.yml")))


def test_galaxy_version_is_released():
    assert CURRENT in RELEASES


@pytest.mark.parametrize("path", PLUGINS, ids=os.path.basename)
def test_version_added_is_released_or_next(path):
    doc = documentation(path)
    assert doc, "%s has no DOCUMENTATION" % path
    name = doc.get("module") or doc["name"]
    found = dict(versions_added(doc))
    assert "(plugin)" in found, "%s: no version_added" % name
    assert found["(plugin)"] == RELEASED_IN.get(name, NEXT), (
        "%s: version_added %s, but it was released in %s" % (name, found["(plugin)"], RELEASED_IN.get(name, "no release yet: %s" % NEXT)))
    for where, version in found.items():
        assert version in set(RELEASES) | {NEXT}, "%s %s: version_added %s is neither released nor %s" % (name, where, version, NEXT)
