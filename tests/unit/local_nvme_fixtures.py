# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Replay helpers for the recordings in tests/unit/fixtures (see fixtures/README.md).

* ``fixture(tool, name)`` - text of a recorded output.
* ``build_tree(snapshot, root)`` - rebuild a recorded sysfs/procfs/dev snapshot under ``root``.
* ``FakeSystem`` - points ``module_utils.sysfs.ROOT`` at a rebuilt snapshot and answers
  ``AnsibleModule.run_command`` from a table of recorded outputs; any command not in the table fails
  the test. A command can switch the system to another snapshot (``then=``), as creating or stopping
  an array does on the guest.
* ``run_module(main, args)`` - run a module's ``main()`` and return ``(failed, result)``.
"""

from __future__ import annotations

import errno
import json
import os
import shutil

from ansible.module_utils import basic
from ansible.module_utils.testing import patch_module_args

from ansible_collections.inferops.node.plugins.module_utils import sysfs

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'fixtures')
BY_ID = '/dev/disk/by-id/nvme-QEMU_NVMe_Ctrl_'
MODEL = [BY_ID + 'LABMODEL%d' % i for i in range(4)]
INDEX = [BY_ID + 'LABINDEX%d' % i for i in range(2)]


def fixture_path(tool, name):
    return os.path.join(FIXTURES, tool, name)


def fixture(tool, name):
    with open(fixture_path(tool, name), 'r') as handle:
        return handle.read()


def build_tree(snapshot, root):
    """Recreate sysfs/<snapshot>.json (recorded by fixtures/sysfs/snapshot.py) below ``root``."""
    data = json.loads(fixture('sysfs', snapshot + '.json'))

    def host(path):
        return os.path.join(root, path.lstrip('/'))

    for directory in data['dirs']:
        os.makedirs(host(directory), exist_ok=True)
    for path, content in data['files'].items():
        os.makedirs(os.path.dirname(host(path)), exist_ok=True)
        with open(host(path), 'w') as handle:
            handle.write(content)
    for path in data['nodes']:
        os.makedirs(os.path.dirname(host(path)), exist_ok=True)
        if not os.path.lexists(host(path)):
            open(host(path), 'w').close()
    for path, target in data['links'].items():
        os.makedirs(os.path.dirname(host(path)), exist_ok=True)
        if not os.path.lexists(host(path)):
            os.symlink(target, host(path))
    return data


def lsblk_entry(source, kname):
    """``lsblk --json -O <dev>`` for one device, cut from a recorded full ``lsblk --json -O``."""
    for entry in json.loads(fixture('lsblk', source))['blockdevices']:
        if entry.get('kname') == kname or entry.get('name') == kname:
            return json.dumps({'blockdevices': [entry]}, indent=3)
    raise KeyError('%s not in lsblk/%s' % (kname, source))


class AnsibleExit(Exception):
    def __init__(self, failed, result):
        super(AnsibleExit, self).__init__(result.get('msg'))
        self.failed = failed
        self.result = result


class FakeSystem(object):
    """A recorded guest: sysfs snapshot + table of command outputs."""

    def __init__(self, tmp_path, monkeypatch, snapshot):
        self.root = str(tmp_path / 'guest')
        self.tmp = tmp_path
        self.monkeypatch = monkeypatch
        self.calls = []
        self.table = {}
        self.snapshot = None
        self.errno_paths = {}
        self.load(snapshot)
        monkeypatch.setattr(sysfs, 'ROOT', self.root)

        def run_command(module, args, **kwargs):
            # a plain function, so AnsibleModule instances bind themselves as ``module``
            return self._run_command(module, args, **kwargs)
        monkeypatch.setattr(basic.AnsibleModule, 'run_command', run_command)
        monkeypatch.setattr(basic.AnsibleModule, 'get_bin_path', lambda mod, arg, required=False, opt_dirs=None: arg)
        real_write = os.write
        fake = self

        def write(fd, data):
            try:
                target = os.readlink('/proc/self/fd/%d' % fd)
            except OSError:
                target = ''
            for path, code in fake.errno_paths.items():
                if target == os.path.join(fake.root, path.lstrip('/')) or target == os.path.realpath(
                        os.path.join(fake.root, path.lstrip('/'))):
                    raise OSError(code, os.strerror(code))
            return real_write(fd, data)
        monkeypatch.setattr(os, 'write', write)

    # -- state
    def load(self, snapshot):
        if os.path.exists(self.root):
            shutil.rmtree(self.root)
        os.makedirs(self.root)
        build_tree(snapshot, self.root)
        self.snapshot = snapshot

    def path(self, target_path):
        return os.path.join(self.root, target_path.lstrip('/'))

    def read(self, target_path):
        with open(self.path(target_path)) as handle:
            return handle.read()

    def fail_writes(self, target_path, code=errno.EIO):
        """Make a write to this attribute fail with ``code`` (EIO = kernel-managed IRQ)."""
        self.errno_paths[target_path] = code

    # -- commands
    def on(self, args, out='', rc=0, err='', then=None):
        """Answer ``args`` with (rc, out, err); ``then`` switches to another snapshot afterwards.

        ``out`` / ``err`` of the form ``'tool/name'`` prefixed with ``@`` are read from fixtures.
        """
        self.table[tuple(args)] = (rc, out, err, then)
        return self

    def _text(self, value):
        if value.startswith('@'):
            tool, name = value[1:].split('/', 1)
            return fixture(tool, name)
        return value

    def _run_command(self, module, args, check_rc=False, data=None, **kwargs):
        key = tuple(args)
        self.calls.append(list(args))
        if key not in self.table:
            raise AssertionError('unexpected command %r (snapshot %s)' % (list(args), self.snapshot))
        rc, out, err, then = self.table[key]
        out, err = self._text(out), self._text(err)
        if then:
            self.load(then)
        return rc, out, err

    def ran(self, prefix):
        """Calls starting with ``prefix`` (a list)."""
        return [c for c in self.calls if c[:len(prefix)] == list(prefix)]

    # -- common recorded answers
    def blank_members(self, knames):
        """Probing answers for drives without any signature (recorded on a fresh nvme0n1)."""
        for kname in knames:
            dev = '/dev/%s' % kname
            self.on(['mdadm', '--examine', '--export', dev], out='@mdadm/examine_fresh.txt', rc=1,
                    err='@mdadm/examine_fresh.txt.stderr')
            self.on(['lsblk', '--json', '-O', dev], out=lsblk_entry('all_fresh.json', kname))
            self.on(['wipefs', '--no-act', '--json', dev], out='@wipefs/nvme0n1_fresh.json')
            self.on(['blkid', '-p', '-o', 'export', dev], rc=2)
        return self


def run_module(main, args, check_mode=False, diff=False):
    """Run ``main()`` with module args; return ``(failed, result)``."""
    args = dict(args)
    args['_ansible_check_mode'] = check_mode
    args['_ansible_diff'] = diff

    def exit_json(module, **kwargs):
        raise AnsibleExit(False, kwargs)

    def fail_json(module, msg, **kwargs):
        kwargs['msg'] = msg
        raise AnsibleExit(True, kwargs)

    orig_exit, orig_fail = basic.AnsibleModule.exit_json, basic.AnsibleModule.fail_json
    basic.AnsibleModule.exit_json, basic.AnsibleModule.fail_json = exit_json, fail_json
    try:
        with patch_module_args(args):
            try:
                main()
            except AnsibleExit as exc:
                return exc.failed, exc.result
    finally:
        basic.AnsibleModule.exit_json, basic.AnsibleModule.fail_json = orig_exit, orig_fail
    raise AssertionError('module returned without exit_json/fail_json')
