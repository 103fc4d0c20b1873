# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Audit checks of the NVMe drives, on ``nvme_health_info``: PCIe link against its maximum, temperature
(the SMART log's Kelvin, compared in Celsius), critical warnings, wear, media errors, spare, firmware."""

from __future__ import annotations

from ansible_collections.inferops.node.plugins.module_utils.audit.check import Check, read

__all__ = ['CHECKS', 'drive']


def drive(ctrl):
    """How a result names a drive: by serial (kernel names change with probe order), with its kernel name."""
    return '%s (%s %s)' % (ctrl.get('serial'), ctrl.get('name'), (ctrl.get('model') or '').strip())


def _controllers(reads):
    return read(reads, 'nvme_health_info', 'controllers')


# A fabric controller that is not live (reconnecting after its target or path went away) answers no SMART log
# (EAGAIN); its connection is fabric.connections' to report, and the drives behind it are audited on the target.
FABRIC_TRANSPORTS = ('tcp', 'rdma', 'fc')


def _smart(check, reads, build):
    """One result per controller; NOT_CHECKED for a controller whose SMART log could not be read (SKIP for a fabric
    controller that is not live)."""
    results = []
    for ctrl in _controllers(reads):
        evidence = 'nvme smart-log %s -o json' % ctrl.get('device')
        if ctrl.get('error') and ctrl.get('transport') in FABRIC_TRANSPORTS and ctrl.get('state') not in (None, 'live'):
            results.append(check.skip('fabric controller %s, not live: no SMART log until it reconnects '
                                      '(fabric.connections); %s' % (ctrl.get('state'), ctrl['error']), subject=drive(ctrl)))
        elif ctrl.get('error'):
            results.append(check.not_checked(ctrl['error'], subject=drive(ctrl)))
        else:
            results.append(build(ctrl, evidence))
    return results


@Check('nvme.link', 'PCIe link trained at its maximum speed and width', 'critical',
       '/sys/bus/pci/devices/<address>/{current,max}_link_{speed,width}', 'reseat the drive / check the slot and BIOS')
def link(check, reads, expected):
    results = []
    for ctrl in _controllers(reads):
        subject = drive(ctrl)
        link = ctrl.get('pci_link')
        if ctrl.get('transport') != 'pcie' or link is None:
            results.append(check.skip('not a PCIe controller (transport %s)' % ctrl.get('transport'), subject=subject))
            continue
        evidence = '/sys/bus/pci/devices/%s/{current,max}_link_{speed,width}' % ctrl.get('pci_address')
        if link.get('downgraded') is None:
            results.append(check.skip('the kernel reports no PCIe link for %s (an emulated drive has no PCIe '
                                      'capability)' % ctrl.get('pci_address'), subject=subject))
            continue
        wanted = '%s GT/s x%s' % (link['max_gts'], link['max_width'])
        observed = '%s GT/s x%s' % (link['current_gts'], link['current_width'])
        if link['downgraded']:
            results.append(check.fail(subject, wanted, observed, 'link trained at %s where the drive and slot do %s'
                                      % (observed, wanted), evidence))
        else:
            results.append(check.passed(subject, wanted, observed, evidence=evidence))
    return results


@Check('nvme.temperature', 'Composite temperature below the thresholds', 'major', 'nvme smart-log -o json',
       'cooling / airflow (audit_nvme_temp_warn_c, audit_nvme_temp_fail_c)')
def temperature(check, reads, expected):
    warn_c, fail_c = int(expected['audit_nvme_temp_warn_c']), int(expected['audit_nvme_temp_fail_c'])
    wanted = '< %d C' % warn_c

    def build(ctrl, evidence):
        celsius = ctrl.get('temperature_c')
        if celsius is None:
            return check.skip('the controller reports no temperature', subject=drive(ctrl), expected=wanted)
        observed = '%d C (%d K)' % (celsius, ctrl['temperature_k'])
        if celsius >= fail_c:
            return check.fail(drive(ctrl), wanted, observed, '%d C reaches audit_nvme_temp_fail_c %d C' % (celsius, fail_c),
                              evidence)
        if celsius >= warn_c:
            return check.warn(drive(ctrl), wanted, observed, '%d C reaches audit_nvme_temp_warn_c %d C' % (celsius, warn_c),
                              evidence)
        return check.passed(drive(ctrl), wanted, observed, evidence=evidence)
    return _smart(check, reads, build)


@Check('nvme.critical_warning', 'No critical warning bit set', 'critical', 'nvme smart-log -o json',
       'replace the drive (spare, temperature, reliability, read-only or backup bits)')
def critical_warning(check, reads, expected):
    def build(ctrl, evidence):
        bits = ctrl.get('critical_warning')
        return check.compare(drive(ctrl), 0, bits, 'critical_warning = %s (0x%02x)' % (bits, bits or 0), evidence)
    return _smart(check, reads, build)


@Check('nvme.wear', 'Percentage of rated endurance used', 'major', 'nvme smart-log -o json',
       'plan the drive replacement (audit_nvme_wear_warn_percent)')
def wear(check, reads, expected):
    limit = int(expected['audit_nvme_wear_warn_percent'])

    def build(ctrl, evidence):
        used = ctrl.get('percent_used')
        wanted = '< %d %%' % limit
        if used is None:
            return check.skip('the controller reports no percentage used', subject=drive(ctrl))
        if used >= 100:
            return check.fail(drive(ctrl), wanted, used, 'rated endurance used up (%d %%)' % used, evidence)
        if used >= limit:
            return check.warn(drive(ctrl), wanted, used, '%d %% of the rated endurance used' % used, evidence)
        return check.passed(drive(ctrl), wanted, used, evidence=evidence)
    return _smart(check, reads, build)


@Check('nvme.media_errors', 'No unrecovered media errors', 'critical', 'nvme smart-log -o json', 'replace the drive')
def media_errors(check, reads, expected):
    def build(ctrl, evidence):
        count = ctrl.get('media_errors')
        return check.compare(drive(ctrl), 0, count, '%s unrecovered media error(s)' % count, evidence)
    return _smart(check, reads, build)


@Check('nvme.spare', 'Available spare above its threshold', 'critical', 'nvme smart-log -o json', 'replace the drive')
def spare(check, reads, expected):
    def build(ctrl, evidence):
        spare_, threshold = ctrl.get('available_spare'), ctrl.get('available_spare_threshold')
        wanted = '>= %s %%' % threshold
        if spare_ is None or threshold is None:
            return check.skip('the controller reports no spare', subject=drive(ctrl))
        if spare_ < threshold:
            return check.fail(drive(ctrl), wanted, spare_, 'available spare %d %% below its threshold %d %%'
                              % (spare_, threshold), evidence)
        return check.passed(drive(ctrl), wanted, spare_, evidence=evidence)
    return _smart(check, reads, build)


@Check('nvme.firmware', 'Firmware revision as the inventory pins it per model', 'major',
       '/sys/class/nvme/<ctrl>/firmware_rev', 'firmware update (audit_nvme_firmware)')
def firmware(check, reads, expected):
    pins = expected.get('audit_nvme_firmware') or {}
    if not pins:
        return [check.skip('audit_nvme_firmware is empty: no revision pinned (the fleet check compares with the majority)')]
    results = []
    for ctrl in _controllers(reads):
        model = (ctrl.get('model') or '').strip()
        evidence = '/sys/class/nvme/%s/firmware_rev' % ctrl.get('name')
        if model not in pins:
            results.append(check.skip('model %s has no pinned revision in audit_nvme_firmware' % model, subject=drive(ctrl)))
            continue
        found = (ctrl.get('firmware') or '').strip()
        results.append(check.compare(drive(ctrl), pins[model], found, 'firmware %s, audit_nvme_firmware[%r] = %s'
                                     % (found, model, pins[model]), evidence))
    return results


CHECKS = [link, temperature, critical_warning, wear, media_errors, spare, firmware]
