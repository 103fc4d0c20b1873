"""Every version_added in the plugins' documentation names a release that happened or the next one.

A plugin listed in a release says that release; anything newer says the next
release (its notes wait in changelogs/fragments/). galaxy.yml holds either a
released version (the release commit: the next one is the minor after it) or,
between releases, the next one's pre-release, X.Y.Z-dev (docs/release.md).
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
if CURRENT in RELEASES:
    _MAJOR, _MINOR = CURRENT.split(".")[:2]
    NEXT = "%s.%d.0" % (_MAJOR, int(_MINOR) + 1)
else:
    NEXT = CURRENT.split("-", maxsplit=1)[0]
RELEASED_IN = {}
for _version, _release in RELEASES.items():
    for _name in [m["name"] for m in _release.get("modules", [])] + [
            p["name"] for kind in _release.get("plugins", {}).values() for p in kind]:
        RELEASED_IN.setdefault(_name, _version)
PLUGINS = sorted(
    p for p in glob.glob(os.path.join(ROOT, "plugins", "modules", "*.py"))
    + glob.glob(os.path.join(ROOT, "plugins", "lookup", "*.py"))
    + glob.glob(os.path.join(ROOT, "plugins", "filter", "*.yml")))


def _release_key(version):
    return tuple(int(part) for part in version.split("."))


def test_galaxy_version_is_released_or_the_next_ones_dev():
    if CURRENT in RELEASES:
        return
    assert CURRENT == NEXT + "-dev", (
        "galaxy.yml's version %s is neither released (changelogs/changelog.yaml) nor X.Y.Z-dev" % CURRENT)
    assert all(_release_key(NEXT) > _release_key(version) for version in RELEASES), (
        "galaxy.yml's %s is not after every release (%s)" % (CURRENT, ", ".join(RELEASES)))


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
