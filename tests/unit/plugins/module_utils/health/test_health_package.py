# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The node health check as the node runs it: the zip application of module_utils/health/health_package.py (what the
action inferops.node.health_package installs), run with ``python3 -ES`` - no Ansible, no site-packages - on
this machine, reading it with the audit's real info modules. Nothing is replayed: the reads are this host's
(a Debian 12 container here, where systemctl cannot answer, so md_info's read FAILS and its checks are
NOT_CHECKED - as on a node whose read breaks).

* the package is the same bytes from two builds, holds the info modules, the audit's checks and the
  ansible.module_utils they import, with an empty ``ansible/__init__.py``;
* a collection file importing a third-party package is refused, naming the file and the import;
* one run writes the contract's series (docs/monitoring.md) for every host check of the catalogue, which
  ``promtool check metrics`` accepts (Debian's prometheus package; a missing promtool FAILS the test);
* a run that cannot complete exits 1 and leaves the previous file;
* on a Kubernetes worker the run that finds the node not ready takes triton-ready out of the feature file,
  and the next ready run puts it back.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import zipfile

import pytest

import ansible.module_utils

from ansible_collections.inferops.node.plugins.module_utils.audit import catalogue as audit_catalogue
from ansible_collections.inferops.node.plugins.module_utils.common import boot_package
from ansible_collections.inferops.node.plugins.module_utils.health import health_package
from ansible_collections.inferops.node.plugins.module_utils.serving import node_labels

COLLECTION = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..', '..', '..'))
SCRIPT = os.path.join(COLLECTION, 'roles', 'node_health', 'files', 'inferops_node_health.py')
ROOTS = {health_package.COLLECTION: COLLECTION,
         'ansible': os.path.dirname(os.path.dirname(os.path.abspath(ansible.module_utils.__file__)))}
MODULES = ['%s.plugins.modules.%s' % (health_package.COLLECTION, name) for name in audit_catalogue.INFO_MODULES]
PYTHON = shutil.which('python3', path='/usr/bin') or sys.executable
LABEL = 'inferops.feature.node.kubernetes.io/triton-ready'


@pytest.fixture(scope='module')
def package(tmp_path_factory):
    data, names = health_package.build(SCRIPT, MODULES, ROOTS)
    path = tmp_path_factory.mktemp('lib') / 'inferops-node-health.pyz'
    path.write_bytes(data)
    return data, names, path


def run(path, config, tmp_path):
    config_path = tmp_path / 'node-health.json'
    config_path.write_text(json.dumps(config))
    done = subprocess.run([PYTHON, '-ES', str(path), str(config_path)], capture_output=True, text=True, timeout=120,
                          cwd=str(tmp_path), check=False)
    return done.returncode, done.stdout + done.stderr


def series(text):
    """{(name, labels text): value} of a textfile."""
    out = {}
    for line in text.splitlines():
        if line and not line.startswith('#'):
            key, value = line.rsplit(' ', 1)
            name, dummy, labels = key.partition('{')
            out[(name, labels.rstrip('}'))] = value
    return out


def promtool(text):
    tool = shutil.which('promtool')
    assert tool, 'promtool missing: tools/bootstrap.sh installs Debian\'s prometheus package'
    done = subprocess.run([tool, 'check', 'metrics'], input=text, capture_output=True, text=True, check=False)
    return done.returncode, done.stdout + done.stderr


def test_the_package_is_deterministic_and_holds_the_audit(package):
    data, names, dummy = package
    assert health_package.build(SCRIPT, MODULES, ROOTS)[0] == data
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        members = archive.namelist()
        assert archive.read('ansible/__init__.py') == b''
        assert archive.read('__main__.py') == open(SCRIPT, 'rb').read()
        assert sorted(members) == members and all(i.date_time == boot_package.EPOCH for i in archive.infolist())
    for name in ('plugins/modules/md_info.py', 'plugins/module_utils/audit/catalogue.py',
                 'plugins/module_utils/audit/storage.py', 'plugins/module_utils/storage/md.py'):
        assert 'ansible_collections/inferops/node/' + name in members
    assert 'ansible/module_utils/basic.py' in members and 'ansible_collections/__init__.py' in members
    # Nothing of the controller's ansible but module_utils; nothing the checker does not import.
    assert not [m for m in members if m.startswith('ansible/') and not m.startswith(('ansible/module_utils/', 'ansible/__init__'))]
    assert 'ansible_collections/inferops/node/plugins/modules/nvmet_subsystem.py' not in members
    assert 'ansible_collections.inferops.node.plugins.module_utils.storage.page_cache' in names


def test_a_third_party_import_is_refused(tmp_path):
    utils = tmp_path / 'plugins' / 'module_utils'
    utils.mkdir(parents=True)
    (utils / 'fetch.py').write_text('import json\ntry:\n    import yaml\nexcept ImportError:\n    yaml = None\nimport requests\n')
    script = tmp_path / 'main.py'
    script.write_text('from ansible_collections.inferops.node.plugins.module_utils import fetch\n')
    with pytest.raises(boot_package.BootPackageError) as error:
        health_package.build(str(script), [], {health_package.COLLECTION: str(tmp_path)})
    assert 'fetch.py imports requests, which a host without Ansible lacks' in str(error.value)


def test_a_run_writes_every_host_check(package, tmp_path):
    textfile = tmp_path / 'inferops_health.prom'
    config = {'expected': {'group_names': ['local_nvme']},
              'reads': {'platform_info': {}, 'sysctl_info': {}, 'md_info': {'arrays': [], 'units': ['fstrim.timer']}},
              'textfile': str(textfile), 'repository': os.path.dirname(SCRIPT), 'labels': None}
    code, out = run(package[2], config, tmp_path)
    assert code == 0, out
    text = textfile.read_text()
    assert promtool(text) == (0, '')
    found = series(text)
    checks = set(labels.split('check="')[1].split('"')[0] for name, labels in found if name == 'inferops_health_check')
    assert checks == set(check.id for check in audit_catalogue.HOST_CHECKS)
    # Read here, so never SKIP for want of a read: evaluated, or NOT_CHECKED when the read failed.
    platform = [k for k, v in found.items() if 'check="platform.kernel"' in k[1] and v == '1']
    assert len(platform) == 1 and 'status="SKIP"' not in platform[0][1]
    for name in ('inferops_health_node_ready', 'inferops_health_last_run_timestamp_seconds',
                 'inferops_health_run_duration_seconds'):
        assert (name, '') in found
    ratio = float(found[('inferops_page_cache_resident_ratio', 'repository="%s"' % os.path.dirname(SCRIPT))])
    assert 0.0 <= ratio <= 1.0
    # The run says what it found, in one line of the journal.
    assert out.startswith('inferops-node-health: ')
    # No temporary file left beside it.
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith('.')] == []


def test_a_run_that_cannot_complete_leaves_the_previous_file(package, tmp_path):
    textfile = tmp_path / 'inferops_health.prom'
    textfile.write_text('inferops_health_last_run_timestamp_seconds 1\n')
    code, out = run(package[2], {'expected': {}, 'reads': {'platform_info': {}},
                                 'textfile': str(tmp_path / 'gone' / 'inferops_health.prom')}, tmp_path)
    assert code == 1 and 'run not completed, textfile left as it was' in out
    assert textfile.read_text() == 'inferops_health_last_run_timestamp_seconds 1\n'


def test_the_label_leaves_while_not_ready_and_comes_back(package, tmp_path):
    import datetime
    features = tmp_path / 'features.d'
    features.mkdir()
    feature_file = features / 'inferops-node'
    expiry = datetime.datetime(2030, 1, 1, tzinfo=datetime.timezone.utc)
    written = node_labels.render({LABEL: 'true', 'inferops.feature.node.kubernetes.io/tuning-profile': 'local_nvme'},
                                 expiry)
    feature_file.write_text(written)
    gate = {'file': str(feature_file), 'label': LABEL, 'held': str(tmp_path / 'held-label.json')}
    textfile = tmp_path / 'inferops_health.prom'
    # Not ready: a platform check FAILs (the kernel is older than the inventory's minimum).
    code, out = run(package[2], {'expected': {'audit_kernel_min': '99.0'}, 'reads': {'platform_info': {}},
                                 'textfile': str(textfile), 'labels': gate}, tmp_path)
    assert code == 0 and 'NOT READY' in out and 'label %s: removed' % LABEL in out, out
    assert series(textfile.read_text())[('inferops_health_node_ready', '')] == '0'
    left = node_labels.parse(feature_file.read_text())
    assert LABEL not in left['labels'] and left['expiry'] == expiry and len(left['labels']) == 1
    # Still not ready: nothing more happens.
    code, out = run(package[2], {'expected': {'audit_kernel_min': '99.0'}, 'reads': {'platform_info': {}},
                                 'textfile': str(textfile), 'labels': gate}, tmp_path)
    assert 'label %s: held' % LABEL in out
    # Ready (nothing read fails, nothing FAILs): the label is back, the expiry still the role's.
    code, out = run(package[2], {'expected': {}, 'reads': {}, 'textfile': str(textfile), 'labels': gate}, tmp_path)
    assert code == 0 and 'label %s: restored' % LABEL in out, out
    assert feature_file.read_text() == written and not os.path.exists(gate['held'])
    assert [p.name for p in features.iterdir()] == ['inferops-node']
    # A gate that cannot write says so; the run completes and the textfile is written.
    textfile.unlink()
    broken = dict(gate, held=str(tmp_path / 'no-such-dir' / 'held-label.json'))
    code, out = run(package[2], {'expected': {'audit_kernel_min': '99.0'}, 'reads': {'platform_info': {}},
                                 'textfile': str(textfile), 'labels': broken}, tmp_path)
    assert code == 0 and 'label %s: FAILED (FileNotFoundError' % LABEL in out, out
    # The safe side: the label is out (the file is written before the hold); k8s_node_labels' next run decides.
    assert LABEL not in node_labels.parse(feature_file.read_text())['labels']
    assert series(textfile.read_text())[('inferops_health_node_ready', '')] == '0'
