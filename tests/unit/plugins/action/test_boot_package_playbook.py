# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""inferops.node.boot_package run by ansible-playbook --check --diff on localhost, into a temporary directory:
the diff printed in check mode and in a real run, and none when nothing changes.

One playbook run (about 5 s) for every case: its tasks install into files of their own, a real run's task
with ``check_mode: false``. The managed node is this machine, so nothing here is recorded or replaced.
"""

from __future__ import annotations

import hashlib
import io
import os
import subprocess
import sys
import zipfile

import pytest

from ansible_collections.inferops.node.plugins.module_utils.common import boot_package
from ansible_collections.inferops.node.tests.unit.host_package import (
    COLLECTION, MODULE_UTILS, OLDER_LINE, older_package, role_script)

SCRIPT = role_script('nvmeof_target', 'inferops_nvmet_restore.py')
# The directory that holds ansible_collections/inferops/node, for ansible-playbook to find the collection.
COLLECTIONS = os.path.dirname(os.path.dirname(os.path.dirname(COLLECTION)))

PLAYBOOK = '''---
- name: Boot package diffs
  hosts: localhost
  gather_facts: false
  tasks:
    - name: first install
      inferops.node.boot_package:
        script: {script}
        dest: "{{{{ lib }}}}/fresh.pyz"
    - name: upgrade
      inferops.node.boot_package:
        script: {script}
        dest: "{{{{ lib }}}}/checked.pyz"
    - name: upgrade for real
      inferops.node.boot_package:
        script: {script}
        dest: "{{{{ lib }}}}/real.pyz"
      check_mode: false
    - name: again
      inferops.node.boot_package:
        script: {script}
        dest: "{{{{ lib }}}}/real.pyz"
      check_mode: false
'''


@pytest.fixture(scope='module')
def run(tmp_path_factory):
    """(data, old, lib, {task name: its printed lines}) of ``ansible-playbook --check --diff``."""
    tmp = tmp_path_factory.mktemp('boot_package')
    lib = tmp / 'lib'
    lib.mkdir()
    data, dummy = boot_package.build(SCRIPT, MODULE_UTILS)
    old = older_package(data)
    (lib / 'checked.pyz').write_bytes(old)
    (lib / 'real.pyz').write_bytes(old)
    (tmp / 'play.yml').write_text(PLAYBOOK.format(script=SCRIPT))
    (tmp / 'hosts').write_text('localhost ansible_connection=local ansible_python_interpreter=%s\n' % sys.executable)
    (tmp / 'ansible.cfg').write_text('[defaults]\nstdout_callback = ansible.builtin.default\nnocolor = true\n'
                                     'retry_files_enabled = false\nlocal_tmp = %s/local\nremote_tmp = %s/remote\n'
                                     % (tmp, tmp))
    env = dict((key, value) for key, value in os.environ.items() if not key.startswith('ANSIBLE_'))
    # ansible-playbook refuses a locale that is not UTF-8 (C.UTF-8: the C locale's rules otherwise).
    env.update(ANSIBLE_CONFIG=str(tmp / 'ansible.cfg'), ANSIBLE_COLLECTIONS_PATH=COLLECTIONS, LC_ALL='C.UTF-8')
    proc = subprocess.run([sys.executable, '-m', 'ansible.cli.playbook', '-i', str(tmp / 'hosts'), '--check', '--diff',
                           '-e', 'lib=%s' % lib, str(tmp / 'play.yml')], cwd=str(tmp), env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    tasks, name = {}, None
    for line in proc.stdout.splitlines():
        if line.startswith(('TASK [', 'PLAY RECAP')):
            name = line[len('TASK ['):line.index(']')] if line.startswith('TASK [') else None
            tasks[name] = []
        elif name and line:
            tasks[name].append(line)
    return data, old, lib, tasks


def listing(dest, data):
    """The package's listing lines, computed here on their own: the zip, then each file in it."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        files = [(archive.read(name), name) for name in sorted(archive.namelist())]
    return ['%s: sha1 %s, %d bytes' % (dest, hashlib.sha1(data).hexdigest(), len(data))] + [
        '%s  %6d  %s' % (hashlib.sha1(content).hexdigest(), len(content), name) for content, name in files]


def upgrade_diff(dest, old, data):
    """What --diff prints of the older package replaced: the listing, then common/sysfs.py (added), configfs.py
    (removed) and fabric/nvmet.py (one line less), with the callback's three lines of context."""
    with open(os.path.join(MODULE_UTILS, 'fabric', 'nvmet.py')) as handle:
        nvmet = handle.read().splitlines()
    with open(os.path.join(MODULE_UTILS, 'common', 'sysfs.py')) as handle:
        sysfs = handle.read().splitlines()
    before, after = listing(dest, old), listing(dest, data)
    # The listings, sorted by name: configfs.py (before) stands where common/sysfs.py (after) does.
    return [
        '--- before: ' + dest, '+++ after: ' + dest, '@@ -1,10 +1,10 @@',
        '-' + before[0], '+' + after[0]] + [' ' + line for line in before[1:5]] + [
        '-' + before[5], '+' + after[5], ' ' + before[6], '-' + before[7], '+' + after[7], ' ' + before[8],
        ' ' + before[9],
        '--- before: %s/inferops/common/sysfs.py (absent)' % dest, '+++ after: %s/inferops/common/sysfs.py' % dest,
        '@@ -0,0 +1,%d @@' % len(sysfs)] + ['+' + line for line in sysfs] + [
        '--- before: %s/inferops/configfs.py' % dest, '+++ after: %s/inferops/configfs.py (removed)' % dest,
        '@@ -1 +0,0 @@', '-CONFIGFS = "/sys/kernel/config"',
        '--- before: %s/inferops/fabric/nvmet.py' % dest, '+++ after: %s/inferops/fabric/nvmet.py' % dest,
        '@@ -1,5 +1,4 @@', ' ' + nvmet[0], '-' + OLDER_LINE.rstrip('\n')] + [' ' + line for line in nvmet[1:4]]


def test_check_mode_first_install_lists_the_files(run):
    data, dummy, lib, tasks = run
    dest = str(lib / 'fresh.pyz')
    lines = tasks['first install']
    # The header says why nothing was read: slurp's own message, "file not found" here.
    assert lines[0].startswith('--- before: %s (' % dest) and 'not found' in lines[0].lower()
    assert lines[1:] == ['+++ after: ' + dest, '@@ -0,0 +1,10 @@'] + [
        '+' + line for line in listing(dest, data)] + ['changed: [localhost]']
    assert not os.path.exists(dest)


def test_check_mode_upgrade_shows_each_changed_file(run):
    data, old, lib, tasks = run
    dest = str(lib / 'checked.pyz')
    assert tasks['upgrade'] == upgrade_diff(dest, old, data) + ['changed: [localhost]']
    assert (lib / 'checked.pyz').read_bytes() == old


def test_real_run_shows_the_same_diff_and_installs(run):
    data, old, lib, tasks = run
    dest = str(lib / 'real.pyz')
    assert tasks['upgrade for real'] == upgrade_diff(dest, old, data) + ['changed: [localhost]']
    assert (lib / 'real.pyz').read_bytes() == data


def test_no_diff_when_nothing_changes(run):
    dummy, dummy, dummy, tasks = run
    assert tasks['again'] == ['ok: [localhost]']
