# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which site roles a run applies, from its ``--tags`` / ``--skip-tags``.

Every role of the site playbooks carries its own name as its one tag (tests/unit checks the
playbooks), so a role runs when Ansible's tag selection lets that tag through. The preflight's host
checks use this: ``--skip-tags docker_engine`` on a host whose engine is managed elsewhere must not be
refused by docker_engine's host checks, for a role the run never applies. Ansible's special tags:
``all`` (the default of ``--tags``) and ``tagged`` select every role, ``untagged`` none of them
(the roles are tagged); ``always`` is the preflight's own tag, not a role's.
"""

from __future__ import annotations


def roles_run(roles, run_tags=None, skip_tags=None):
    """The roles of ``roles`` (in their order) that a run with Ansible's ``ansible_run_tags`` /
    ``ansible_skip_tags`` applies."""
    run = set(str(tag) for tag in (run_tags or ['all']))
    skip = set(str(tag) for tag in (skip_tags or []))
    if skip & {'all', 'tagged'}:
        return []
    every = bool(run & {'all', 'tagged'})
    return [role for role in roles if (every or role in run) and role not in skip]
