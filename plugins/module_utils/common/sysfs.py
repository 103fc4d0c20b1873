# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read and write sysfs / procfs attributes.

Writes go through ``os.open`` / ``os.write`` / ``os.close`` so the kernel's error for
the store (EIO or EPERM for a kernel-managed IRQ, EINVAL for a value the attribute refuses, EBUSY,
...) surfaces as ``SysfsWriteError`` at the write or at the close, instead of being lost in
a buffered file object's implicit close.

All paths are absolute paths as on the target (``/sys/...``, ``/proc/...``). Unit tests
point ``ROOT`` at a directory holding a recorded copy of the tree; production code leaves
it empty.

No Ansible imports (standard library only): the irq_affinity role installs this file on hosts,
with ``irq.py``, for its boot-time pin script.
"""

from __future__ import annotations

import errno
import os

__all__ = [
    'ROOT', 'SysfsWriteError', 'host_path', 'exists', 'isdir', 'listdir', 'realpath',
    'read_attr', 'read_int', 'write_attr', 'OSRELEASE', 'kernel_release', 'ONLINE_CPUS',
]

# Prefix added to every path; unit tests set it to a fixture tree.
ROOT = ''
# The running kernel's release (uname -r).
OSRELEASE = '/proc/sys/kernel/osrelease'
# The online CPUs, a cpulist (parsed by cpulist.parse_cpulist).
ONLINE_CPUS = '/sys/devices/system/cpu/online'


class SysfsWriteError(OSError):
    """A sysfs/procfs store failed. ``managed`` is true when the kernel refuses user space the IRQ's affinity
    (a kernel-managed IRQ): EIO up to Linux 6.1 (Debian 12), EPERM on Debian 13's 6.12 - the same refusal of
    ``irq_can_set_affinity_usr``, recorded on the seed_node lab guest (NVMe I/O queue vectors)."""

    def __init__(self, path, value, err):
        self.path = path
        self.value = value
        code = getattr(err, 'errno', None)
        strerror = getattr(err, 'strerror', None) or str(err)
        super(SysfsWriteError, self).__init__(code, 'writing %r to %s: %s' % (value, path, strerror))

    @property
    def managed(self):
        return self.errno in (errno.EIO, errno.EPERM)


def host_path(path):
    """Path on this machine for a target path (adds ``ROOT``)."""
    if ROOT:
        return os.path.join(ROOT, path.lstrip('/'))
    return path


def exists(path):
    return os.path.exists(host_path(path))


def isdir(path):
    return os.path.isdir(host_path(path))


def listdir(path):
    """Sorted directory entries, or an empty list when the directory does not exist."""
    try:
        return sorted(os.listdir(host_path(path)))
    except OSError:
        return []


def realpath(path):
    """``os.path.realpath`` of a target path, returned as a target path."""
    real = os.path.realpath(host_path(path))
    if ROOT:
        root = os.path.realpath(ROOT)
        if real == root:
            return '/'
        if real.startswith(root + os.sep):
            return real[len(root):]
    return real


def read_attr(path, default=None):
    """Content of an attribute without the trailing newline; ``default`` when it cannot be read."""
    try:
        fd = os.open(host_path(path), os.O_RDONLY)
    except OSError:
        return default
    try:
        chunks = []
        while True:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            chunks.append(chunk)
    except OSError:
        return default
    finally:
        os.close(fd)
    return b''.join(chunks).decode('utf-8', 'replace').rstrip('\n')


def read_int(path, default=None):
    """Integer attribute (``default`` when missing or not an integer)."""
    value = read_attr(path)
    if value is None:
        return default
    try:
        return int(value.strip())
    except ValueError:
        return default


def block_size_bytes(kname):
    """Size of block device ``kname`` in bytes: ``/sys/class/block/<kname>/size`` counts 512-byte sectors,
    whatever the device's logical block size. None when unreadable."""
    sectors = read_int('/sys/class/block/%s/size' % kname)
    return sectors * 512 if sectors is not None else None


def kernel_release():
    """The running kernel's release (``6.1.0-57-amd64``, from ``/proc/sys/kernel/osrelease``), None when
    it cannot be read."""
    value = read_attr(OSRELEASE)
    return None if value is None else value.strip()


def write_attr(path, value):
    """Store ``value`` (str or int) into an attribute; raise ``SysfsWriteError`` on any failure.

    The file is opened O_WRONLY, without O_CREAT: attributes are never created. Under a test
    ``ROOT`` (regular files) the file is truncated after a successful write, as sysfs shows only
    the new value.
    """
    data = ('%s' % (value,)).encode('utf-8')
    target = host_path(path)
    try:
        fd = os.open(target, os.O_WRONLY)
    except OSError as exc:
        raise SysfsWriteError(path, value, exc)
    try:
        written = os.write(fd, data)
        if written != len(data):
            raise SysfsWriteError(path, value, OSError(errno.EIO, 'short write (%d of %d bytes)' % (written, len(data))))
        if ROOT:
            os.ftruncate(fd, written)
    except SysfsWriteError:
        _close_quietly(fd)
        raise
    except OSError as exc:
        _close_quietly(fd)
        raise SysfsWriteError(path, value, exc)
    try:
        os.close(fd)
    except OSError as exc:
        raise SysfsWriteError(path, value, exc)


def _close_quietly(fd):
    try:
        os.close(fd)
    except OSError:
        pass
