# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What apt says of packages: ``apt-cache policy <names>`` (C locale) run and parsed, for docker_engine_info and
service_info (which roles read before they decide whether apt must run at all).

``read_packages(runner, packages, who)`` -> ``{package: {installed, candidate} or None}`` (a CommandRunner; ``who``
names the module in the failure message, as systemd_units.read_units does)."""

from __future__ import annotations

__all__ = ['parse_apt_policy', 'packages_report', 'read_packages', 'POLICY_ARGS']

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


def read_packages(runner, packages, who):
    if not packages:
        return {}
    rc, out, err = runner.run(POLICY_ARGS + list(packages))
    if rc != 0:
        runner.module.fail_json(msg='%s: apt-cache policy %s failed (rc %d): %s'
                                % (who, ' '.join(packages), rc, (err or out).strip()), command_log=runner.log)
    return packages_report(packages, out)
