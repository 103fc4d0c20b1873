# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Files the modules own on the target (udev rules, ``mdadm.conf``, NVMe boot records, state files).

* ``read_text`` - a file's content, or None when it cannot be read;
* ``write_text_atomic`` - replace a file through a temporary file in its directory and
  ``module.atomic_move``, so readers never see a partial file;
* ``replace_text`` - the same without a module (action plugins on the controller, the node health check).

Paths are paths on this machine: callers that work with target paths under a test
``sysfs.ROOT`` pass ``sysfs.host_path(path)``.
"""

from __future__ import annotations

import os
import tempfile

from ansible.module_utils.common.text.converters import to_bytes

__all__ = ['read_text', 'replace_text', 'write_text_atomic']


def read_text(path):
    """Content of ``path``, or None when it cannot be read (missing, unreadable)."""
    try:
        with open(path, 'r') as handle:
            return handle.read()
    except (IOError, OSError):
        return None


def replace_text(path, content, prefix='.inferops.', mode=0o644):
    """Replace ``path`` (its directory must exist) through a temporary file ``<prefix>XXXXXX`` in the same
    directory, renamed over it: a reader sees the old file or the new one, never half of one."""
    fd, tmp = tempfile.mkstemp(prefix=prefix, dir=os.path.dirname(path) or '.')
    try:
        with os.fdopen(fd, 'w') as handle:
            handle.write(content)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_text_atomic(module, path, content, prefix='.inferops.', mode=0o644, dir_mode=0o755, force_mode=False):
    """Replace ``path`` with ``content``.

    A missing directory is created with ``dir_mode``. The temporary file (``<prefix>XXXXXX``, in the
    same directory) gets ``mode``; ``module.atomic_move`` keeps the mode of a file it replaces, unless
    ``force_mode`` sets ``mode`` again afterwards (files holding secrets).
    """
    directory = os.path.dirname(path) or '.'
    if not os.path.isdir(directory):
        os.makedirs(directory, dir_mode)
    fd, tmp = tempfile.mkstemp(prefix=prefix, dir=directory)
    try:
        os.write(fd, to_bytes(content))
    finally:
        os.close(fd)
    os.chmod(tmp, mode)
    module.atomic_move(tmp, path)
    if force_mode:
        os.chmod(path, mode)
