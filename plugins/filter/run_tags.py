# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which site roles a run applies (playbooks/preflight.yml's host checks).

The documentation of each filter lives next to this file in ``<filter name>.yml``.
"""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.node.plugins.module_utils.common.run_tags import roles_run


def roles_run_by_tags(roles, run_tags=None, skip_tags=None):
    """The roles a run with these ``--tags`` / ``--skip-tags`` applies."""
    if not isinstance(roles, list):
        raise AnsibleFilterError('roles_run_by_tags: expects a list of role names')
    tags = []
    for name, value in (('run_tags', run_tags), ('skip_tags', skip_tags)):
        # Ansible hands the magic variables over as a list or a set, depending on the version.
        if value is not None and (isinstance(value, (str, bytes, dict)) or not hasattr(value, '__iter__')):
            raise AnsibleFilterError('roles_run_by_tags: %s must be a list (ansible_run_tags, ansible_skip_tags)' % name)
        tags.append(None if value is None else list(value))
    return roles_run(list(roles), *tags)


class FilterModule(object):

    def filters(self):
        return {'roles_run_by_tags': roles_run_by_tags}
