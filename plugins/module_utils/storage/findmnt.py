# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The live mount table from ``findmnt``'s JSON, read once for md_info and xfs_mount; the octal escapes of
fstab and /proc/self/mountinfo paths."""

from __future__ import annotations

import json
import re

FINDMNT = ['findmnt', '-J', '-l', '-o', 'TARGET,SOURCE,FSTYPE,OPTIONS']


def mount_entries(runner, caller):
    """findmnt's entries (target, source, fstype, options), in mount order; fails the module naming ``caller``.

    ``runner`` is the module's ``command.CommandRunner``."""
    rc, out, err = runner.run(FINDMNT)
    if rc != 0:
        runner.module.fail_json(msg='%s: cannot read the mounts (%s, rc %d): %s' % (caller, ' '.join(FINDMNT), rc, err.strip()),
                                command_log=runner.log)
    try:
        return json.loads(out)['filesystems']
    except (ValueError, KeyError, TypeError) as exc:
        runner.module.fail_json(msg='%s: unexpected findmnt output: %s' % (caller, exc), command_log=runner.log)


def unescape(text):
    """fstab/mountinfo octal escapes (``\\040`` for a blank, ``\\134`` for a backslash) undone."""
    return re.sub(r'\\([0-7]{3})', lambda m: chr(int(m.group(1), 8)), text)
