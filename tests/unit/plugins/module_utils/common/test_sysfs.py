# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import errno
import os

import pytest

from ansible_collections.inferops.node.plugins.module_utils.common import sysfs
from ansible_collections.inferops.node.tests.unit.local_nvme_fixtures import FakeSystem


def test_read_recorded_attributes(tmp_path, monkeypatch):
    FakeSystem(tmp_path, monkeypatch, 'raid0')
    assert sysfs.read_attr('/sys/block/md127/queue/read_ahead_kb') == '4096'
    assert sysfs.read_int('/sys/block/md127/md/chunk_size') == 524288
    assert sysfs.read_attr('/sys/block/md127/md/level') == 'raid0'
    assert sysfs.read_int('/sys/block/md127/md/level') is None
    assert sysfs.read_attr('/sys/block/md127/md/nope') is None
    assert sysfs.read_attr('/sys/block/md127/md/nope', 'dflt') == 'dflt'
    assert sysfs.read_int('/sys/block/md127/md/nope', -1) == -1
    assert sysfs.read_attr('/proc/interrupts').startswith('           CPU0       CPU1')
    assert sysfs.listdir('/sys/block/nvme0n1/holders') == ['md127']
    assert sysfs.listdir('/sys/block/nvme4n1/holders') == []
    assert sysfs.realpath('/dev/md/model') == '/dev/md127'
    assert sysfs.realpath('/sys/block/nvme0n1') == '/sys/devices/pci0000:00/0000:00:03.0/nvme/nvme0/nvme0n1'
    assert sysfs.isdir('/sys/block/md127/md') and not sysfs.isdir('/sys/block/nvme0n1/md')


def test_write_and_read_back(tmp_path, monkeypatch):
    system = FakeSystem(tmp_path, monkeypatch, 'fresh')
    sysfs.write_attr('/sys/block/nvme0n1/queue/read_ahead_kb', 4096)
    assert sysfs.read_int('/sys/block/nvme0n1/queue/read_ahead_kb') == 4096
    sysfs.write_attr('/proc/irq/31/smp_affinity_list', '1')
    assert system.read('/proc/irq/31/smp_affinity_list') == '1'


@pytest.mark.parametrize('irq, code, value, before, managed', [
    (33, errno.EIO, '1', '0\n', True),  # the guest's answer for nvme0q1 (fixtures/irq/managed_write_check.txt)
    (31, errno.EINVAL, '7', '1\n', False),
])
def test_failed_write_is_managed_only_for_eio(tmp_path, monkeypatch, irq, code, value, before, managed):
    system = FakeSystem(tmp_path, monkeypatch, 'fresh')
    attr = '/proc/irq/%d/smp_affinity_list' % irq
    system.fail_writes(attr, code)
    with pytest.raises(sysfs.SysfsWriteError) as err:
        sysfs.write_attr(attr, value)
    assert err.value.managed is managed
    assert err.value.errno == code
    assert attr in str(err.value) and repr(value) in str(err.value)
    assert system.read(attr) == before


def test_write_missing_attribute(tmp_path, monkeypatch):
    FakeSystem(tmp_path, monkeypatch, 'fresh')
    with pytest.raises(sysfs.SysfsWriteError) as err:
        sysfs.write_attr('/proc/irq/999/smp_affinity_list', '1')
    assert err.value.errno == errno.ENOENT


def test_error_raised_at_close_surfaces(tmp_path, monkeypatch):
    """sysfs may report the store's error only when the file is closed."""
    target = tmp_path / 'attr'
    target.write_text('0\n')
    real_close = os.close
    closed = []

    def close(fd):
        real_close(fd)
        if not closed:
            closed.append(fd)
            raise OSError(errno.EIO, 'Input/output error')
    monkeypatch.setattr(os, 'close', close)
    with pytest.raises(sysfs.SysfsWriteError) as err:
        sysfs.write_attr(str(target), '1')
    assert err.value.managed


def test_short_write(tmp_path, monkeypatch):
    target = tmp_path / 'attr'
    target.write_text('0\n')
    monkeypatch.setattr(os, 'write', lambda fd, data: 0)
    with pytest.raises(sysfs.SysfsWriteError, match='short write'):
        sysfs.write_attr(str(target), '12')


def test_host_path_without_root(monkeypatch):
    monkeypatch.setattr(sysfs, 'ROOT', '')
    assert sysfs.host_path('/sys/block') == '/sys/block'
    assert sysfs.read_attr('/proc/self/nonexistent') is None


def test_kernel_release_is_the_stripped_osrelease_or_none(tmp_path, monkeypatch):
    monkeypatch.setattr(sysfs, 'ROOT', str(tmp_path))
    assert sysfs.kernel_release() is None
    os.makedirs(str(tmp_path / 'proc/sys/kernel'))
    (tmp_path / 'proc/sys/kernel/osrelease').write_text('6.1.0-57-amd64 \n')
    assert sysfs.kernel_release() == '6.1.0-57-amd64'
    (tmp_path / 'proc/sys/kernel/osrelease').write_text('')
    assert sysfs.kernel_release() == ''
