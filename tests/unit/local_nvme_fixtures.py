# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Replay helpers for the local_nvme recordings in tests/unit/fixtures (see fixtures/README.md).

* ``fixture(tool, name)`` - text of a recorded output (from ``module_harness``, like ``fixture_path``).
* ``lsblk_entry(source, kname)`` - one device cut from a recorded full ``lsblk --json -O``.
* ``FakeSystem`` - the guest: a ``module_harness.FakeHost`` on the snapshots of fixtures/sysfs whose
  ``@tool/name`` answers are read from fixtures; attribute writes can be made to fail like the kernel's.
* ``run_module(main, args)`` - run a module's ``main()`` and return ``(failed, result)`` (``module_harness``).
"""

from __future__ import annotations

import errno
import json
import os

from ansible_collections.inferops.node.tests.unit.module_harness import FakeHost, fixture, fixture_path, run_module

__all__ = ['BY_ID', 'INDEX', 'MODEL', 'FakeSystem', 'fixture', 'fixture_path', 'lsblk_entry', 'run_module']

BY_ID = '/dev/disk/by-id/nvme-QEMU_NVMe_Ctrl_'
MODEL = [BY_ID + 'LABMODEL%d' % i for i in range(4)]
INDEX = [BY_ID + 'LABINDEX%d' % i for i in range(2)]


def lsblk_entry(source, kname):
    """``lsblk --json -O <dev>`` for one device, cut from a recorded full ``lsblk --json -O``."""
    for entry in json.loads(fixture('lsblk', source))['blockdevices']:
        if entry.get('kname') == kname or entry.get('name') == kname:
            return json.dumps({'blockdevices': [entry]}, indent=3)
    raise KeyError('%s not in lsblk/%s' % (kname, source))


class FakeSystem(FakeHost):
    """The recorded guest: sysfs snapshot + table of command outputs."""

    snapshot_file = 'sysfs/%s.json'

    def __init__(self, tmp_path, monkeypatch, snapshot):
        super(FakeSystem, self).__init__(tmp_path, monkeypatch, snapshot)
        self.errno_paths = {}
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

    def fail_writes(self, target_path, code=errno.EIO):
        """Make a write to this attribute fail with ``code`` (EIO = kernel-managed IRQ)."""
        self.errno_paths[target_path] = code

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
