# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Mount option filters: validation and live-mount comparison, the rule of module_utils/storage/mount_options.py.

The documentation of each filter lives next to this file in ``<filter name>.yml``.
"""

from __future__ import annotations

import json

from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.node.plugins.module_utils.storage.mount_options import compare, option_errors


def mount_options_errors(value, name='mount options', fstype='xfs'):
    """Problems of a mount option string, each as '<name> = "<value>": <problem>' (empty list = valid)."""
    shown = json.dumps(value) if isinstance(value, (str, int, float, bool, type(None))) else repr(value)
    return ['%s = %s: %s' % (name, shown, problem) for problem in option_errors(value, fstype=fstype)]


def mount_options_missing(value, live_options):
    """{missing, remount, pending}: wanted options absent from a live mount's option list."""
    if not isinstance(value, str):
        raise AnsibleFilterError('mount_options_missing: the options must be a string, got %r' % (value,))
    if isinstance(live_options, str):
        live_options = live_options.split(',')
    try:
        live = [str(option) for option in (live_options or [])]
    except TypeError:
        raise AnsibleFilterError('mount_options_missing: live_options must be a list, got %r' % (live_options,))
    return compare(value, live)


class FilterModule(object):
    """Mount option filters."""

    def filters(self):
        return {
            'mount_options_errors': mount_options_errors,
            'mount_options_missing': mount_options_missing,
        }
