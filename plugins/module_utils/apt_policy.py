# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What apt says of packages: ``apt-cache policy <names>`` (C locale) parsed, for docker_engine and
service_info (which roles read before they decide whether apt must run at all)."""

from __future__ import annotations

__all__ = ['parse_apt_policy', 'packages_report', 'POLICY_ARGS']

POLICY_ARGS = ['apt-cache', 'policy']


def parse_apt_policy(text):
    """{package: {'installed': version or None, 'candidate': version or None}} from
    `apt-cache policy <names>` (C locale). apt prints nothing for a name it does not know."""
    result, current = {}, None
    for line in (text or '').splitlines():
        if line and not line[0].isspace() and line.endswith(':'):
            current = line[:-1]
            result[current] = {'installed': None, 'candidate': None}
        elif current is not None:
            stripped = line.strip()
            for field in ('Installed', 'Candidate'):
                if stripped.startswith(field + ':'):
                    value = stripped.split(':', 1)[1].strip()
                    result[current][field.lower()] = None if value == '(none)' else value
    return result


def packages_report(packages, policy_text):
    """{package: {installed, candidate}} of the named packages (None when apt does not know one)."""
    policy = parse_apt_policy(policy_text)
    return dict((name, policy.get(name)) for name in packages or [])
