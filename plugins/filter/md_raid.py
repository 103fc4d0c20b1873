# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""md RAID + XFS filters: the rules and plan of module_utils/storage/md_raid_plan.py for the role md_raid_xfs
(its validation, which playbooks/preflight.yml also runs on each host, and its decisions).

The documentation of each filter lives next to this file in ``<filter name>.yml``.
"""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.node.plugins.module_utils.storage import md_raid_plan


def _settings(value, name):
    if not isinstance(value, dict):
        raise AnsibleFilterError('%s: expects a mapping of the md_raid_xfs_* variables, got %r' % (name, value))
    return value


def _info(value, name):
    if not isinstance(value, dict) or not isinstance(value.get('arrays'), dict):
        raise AnsibleFilterError('%s: expects the result of inferops.node.md_info, got %r' % (name, value))
    return value


def md_raid_input_errors(settings):
    """Problems of the md_raid_xfs variables alone, one message each (empty list = valid)."""
    return md_raid_plan.input_errors(_settings(settings, 'md_raid_input_errors'))


def md_raid_want(settings):
    """The wanted arrays with defaults and stripe geometry."""
    return md_raid_plan.want(_settings(settings, 'md_raid_want'))


def md_raid_host_errors(info, settings):
    """Problems of the wanted arrays on the host that md_info read."""
    return md_raid_plan.host_errors(_info(info, 'md_raid_host_errors'), _settings(settings, 'md_raid_host_errors'))


def md_raid_plan_changes(info, settings):
    """Units and kernel values that differ from what is wanted."""
    return md_raid_plan.plan(_info(info, 'md_raid_plan'), _settings(settings, 'md_raid_plan'))


def md_raid_filesystems(info, settings, md_result=None, check_mode=False):
    """Filesystem and mount decisions per wanted array."""
    return md_raid_plan.filesystems(_info(info, 'md_raid_filesystems'), _settings(settings, 'md_raid_filesystems'),
                                    md_result if isinstance(md_result, dict) else None, bool(check_mode))


def md_raid_report(filesystems, info, md_result=None):
    """The md_raid_xfs_report entries, one per array, with a one-line summary."""
    if not isinstance(filesystems, list):
        raise AnsibleFilterError('md_raid_report: expects the list of md_raid_filesystems, got %r' % (filesystems,))
    return md_raid_plan.report(filesystems, _info(info, 'md_raid_report'),
                               md_result if isinstance(md_result, dict) else None)


class FilterModule(object):
    """md RAID + XFS filters."""

    def filters(self):
        return {
            'md_raid_input_errors': md_raid_input_errors,
            'md_raid_want': md_raid_want,
            'md_raid_host_errors': md_raid_host_errors,
            'md_raid_plan': md_raid_plan_changes,
            'md_raid_filesystems': md_raid_filesystems,
            'md_raid_report': md_raid_report,
        }
