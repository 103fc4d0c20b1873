# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What systemd says of units, read in one ``systemctl show`` (md_info's units, docker_engine_info's service).

``read_units(runner, units, who)`` -> ``{unit: {enabled, active, load}}``: ``enabled`` is the UnitFileState
(V(enabled), V(disabled), V(static), ...; ``not-found`` for a unit systemd does not know), ``active`` the
ActiveState, ``load`` the LoadState. ``who`` names the module in the failure message.
"""

from __future__ import annotations

__all__ = ['read_units', 'SHOW_PROPERTIES']

SHOW_PROPERTIES = ['-p', 'Id', '-p', 'UnitFileState', '-p', 'ActiveState', '-p', 'LoadState']


def read_units(runner, units, who):
    if not units:
        return {}
    args = ['systemctl', 'show'] + SHOW_PROPERTIES + list(units)
    rc, out, err = runner.run(args)
    if rc != 0:
        runner.module.fail_json(msg='%s: %s failed (rc %d): %s' % (who, ' '.join(args), rc, err.strip()),
                                command_log=runner.log)
    result = {}
    # systemctl show prints one block per unit, in the order asked, separated by blank lines.
    for unit, block in zip(units, out.strip().split('\n\n')):
        props = dict(line.split('=', 1) for line in block.splitlines() if '=' in line)
        result[unit] = {'enabled': props.get('UnitFileState') or ('not-found' if props.get('LoadState') == 'not-found' else ''),
                        'active': props.get('ActiveState', ''), 'load': props.get('LoadState', '')}
    return result
