"""The lab guests' bytecode cache for Ansible payloads (tools/lab/recipe/guest/inferops_lab_pycache.py).

The cache must never run other code than the archive holds: a changed source compiles
anew, tracebacks name the archive being run, and archives that are not Ansible
payloads are left to zipimport.
"""
import importlib.util
import os
import traceback
import zipfile
import zipimport

import pytest

RECIPE = os.path.join(os.path.dirname(__file__), "..", "..", "..", "tools", "lab", "recipe", "guest")


@pytest.fixture
def pycache(tmp_path, monkeypatch):
    spec = importlib.util.spec_from_file_location("inferops_lab_pycache", os.path.join(RECIPE, "inferops_lab_pycache.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "CACHE_DIR", str(tmp_path / "cache"))
    compiles = []

    def counting_compile(pathname, source):
        compiles.append(pathname)
        return compile(source, pathname, "exec", dont_inherit=True)

    monkeypatch.setattr(module, "_uncached_compile", counting_compile)
    monkeypatch.setattr(zipimport, "_compile_source", zipimport._compile_source)
    module.install()
    module.compiles = compiles
    return module


def archive(directory, name, source):
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, name)
    with zipfile.ZipFile(path, "w") as handle:
        handle.writestr("probe.py", source)
    return path


SOURCE = "def fail():\n    raise RuntimeError('from the archive')\nVALUE = 1\n"


def run(path):
    namespace = {}
    exec(zipimport.zipimporter(path).get_code("probe"), namespace)  # pylint: disable=exec-used
    return namespace


def test_second_payload_with_the_same_source_is_not_compiled_again(pycache, tmp_path):
    first = archive(str(tmp_path / "run1"), "ansible_command_payload.zip", SOURCE)
    second = archive(str(tmp_path / "run2"), "ansible_command_payload.zip", SOURCE)
    assert run(first)["VALUE"] == 1
    namespace = run(second)
    assert namespace["VALUE"] == 1
    assert pycache.compiles == [os.path.join(first, "probe.py")]
    assert len(os.listdir(pycache.CACHE_DIR)) == 1
    with pytest.raises(RuntimeError) as caught:
        namespace["fail"]()
    # The nested function's code too names the archive this run imported from.
    assert os.path.join(second, "probe.py") in "".join(traceback.format_tb(caught.value.__traceback__))


def test_changed_source_is_compiled_anew(pycache, tmp_path):
    run(archive(str(tmp_path / "run1"), "ansible_command_payload.zip", SOURCE))
    changed = run(archive(str(tmp_path / "run2"), "ansible_command_payload.zip", SOURCE.replace("= 1", "= 2")))
    assert changed["VALUE"] == 2
    assert len(pycache.compiles) == 2
    assert len(os.listdir(pycache.CACHE_DIR)) == 2


def test_other_archives_are_left_to_zipimport(pycache, tmp_path):
    path = archive(str(tmp_path / "run1"), "wheel.zip", SOURCE)
    run(path)
    run(path)
    assert len(pycache.compiles) == 2
    assert not os.path.exists(pycache.CACHE_DIR)


def test_unreadable_cache_entry_is_compiled_again(pycache, tmp_path):
    run(archive(str(tmp_path / "run1"), "ansible_command_payload.zip", SOURCE))
    (entry,) = os.listdir(pycache.CACHE_DIR)
    with open(os.path.join(pycache.CACHE_DIR, entry), "wb") as handle:
        handle.write(b"truncated")
    assert run(archive(str(tmp_path / "run2"), "ansible_command_payload.zip", SOURCE))["VALUE"] == 1
    assert len(pycache.compiles) == 2
