# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""NVMe health from the SMART / health log (module ``nvme_health_info``).

* ``parse_smart_log(text)`` - ``nvme smart-log <dev> -o json`` as the audit needs it: temperature in Kelvin
  (as the log and nvme-cli's JSON give it) and Celsius, critical warning, spare, percentage used, media errors.
  nvme-cli named some keys differently across versions (``percent_used`` / ``percentage_used``); both are read.
* ``health(runner, controllers)`` - the log of each controller (``controllers`` as nvme_devices.controllers()
  returns them), through the module's CommandRunner. A controller whose log cannot be read has ``error`` set.
"""

from __future__ import annotations

import json

__all__ = ['KELVIN_OFFSET', 'health', 'parse_smart_log']

KELVIN_OFFSET = 273
# Our name -> the names nvme-cli versions used in smart-log's JSON.
FIELDS = {
    'critical_warning': ('critical_warning',),
    'temperature_k': ('temperature',),
    'available_spare': ('avail_spare', 'available_spare'),
    'available_spare_threshold': ('spare_thresh', 'available_spare_threshold'),
    'percent_used': ('percent_used', 'percentage_used'),
    'media_errors': ('media_errors',),
    'error_log_entries': ('num_err_log_entries',),
    'power_on_hours': ('power_on_hours',),
    'unsafe_shutdowns': ('unsafe_shutdowns',),
    'warning_temp_time': ('warning_temp_time',),
    'critical_comp_time': ('critical_comp_time',),
}


def _int(value):
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value)
    if isinstance(value, str):
        text = value.strip().rstrip('%')
        try:
            return int(text, 0)
        except ValueError:
            return None
    if isinstance(value, dict) and 'value' in value:
        # nvme-cli 2.x reports critical_warning as {"value": N, ...} in some versions.
        return _int(value['value'])
    return None


def parse_smart_log(text):
    """The fields of ``FIELDS`` from ``nvme smart-log -o json`` (None where absent); raise ValueError on non-JSON."""
    data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError('smart-log JSON is not an object')
    out = {}
    for ours, theirs in FIELDS.items():
        value = None
        for key in theirs:
            if key in data:
                value = _int(data[key])
                break
        out[ours] = value
    kelvin = out['temperature_k']
    # 0 K means the controller reports no temperature.
    out['temperature_c'] = kelvin - KELVIN_OFFSET if kelvin else None
    out['sensors_c'] = [_int(data[k]) - KELVIN_OFFSET for k in sorted(data)
                        if k.startswith('temperature_sensor_') and _int(data[k])]
    return out


def health(runner, controllers):
    out = []
    for ctrl in controllers:
        entry = {
            'name': ctrl['name'], 'device': '/dev/' + ctrl['name'], 'model': ctrl.get('model'),
            'serial': ctrl.get('serial'), 'firmware': ctrl.get('firmware'), 'transport': ctrl.get('transport'),
            'state': ctrl.get('state'),
            'pci_address': ctrl.get('pci_address'), 'pci_link': ctrl.get('pci_link'), 'error': None,
        }
        smart = None
        # A second read when the first answered rc 0 without JSON: on a lab guest with a fraction of a core
        # (stop 37's CI) nvme-cli once printed nothing for one drive, and one empty answer is not a fault to
        # report. Two in a row are.
        for attempt in (1, 2):
            rc, stdout, stderr = runner.run(['nvme', 'smart-log', entry['device'], '-o', 'json'])
            if rc != 0:
                entry['error'] = 'nvme smart-log %s: rc=%d %s' % (entry['device'], rc, (stderr or stdout).strip())
                break
            try:
                smart = parse_smart_log(stdout)
                entry['error'] = None
                break
            except ValueError as exc:
                entry['error'] = 'nvme smart-log %s: not JSON (%s)%s' % (
                    entry['device'], exc, ', read twice' if attempt == 2 else '')
        entry.update(smart or dict((key, None) for key in list(FIELDS) + ['temperature_c', 'sensors_c']))
        out.append(entry)
    return out
