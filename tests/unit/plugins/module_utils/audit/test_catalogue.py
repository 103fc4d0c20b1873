# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The audit catalogue on what the info modules returned on lab guests (each read is the module run on its
recorded fixtures): platform_info / nvme_health_info on auditrec (fixtures/audit), nvme_info on irqrec after
nvme_sched (fixtures/info/converged), sysctl_info on ktrec after kernel_tuning with a local override
(fixtures/sysctl), md_info on mdrec fresh / with arrays / degraded (fixtures/md_info).

Every check has a PASS and a FAIL (or WARN, for the checks that only warn) case. Where no recording shows the
fault (a downgraded link, a hot drive, a media error), the test changes one recorded value and says so.
"""

from __future__ import annotations

import copy
import json
import os
import pathlib
import re
import tempfile

import jsonschema
import pytest
import yaml

from ansible_collections.inferops.node.plugins.module_utils.audit import check as audit, catalogue as audit_catalogue
from ansible_collections.inferops.node.plugins.module_utils.interrupts import irq
from ansible_collections.inferops.node.plugins.module_utils.storage import md as md_module
from ansible_collections.inferops.node.plugins.modules import irq_info, irq_pin, md_info, mdadm_array, nvme_health_info, nvme_info
from ansible_collections.inferops.node.plugins.modules import platform_info
from ansible_collections.inferops.node.plugins.modules import storage_benchmark_info, sysctl_info
from ansible_collections.inferops.node.tests.unit import before_fork
from ansible_collections.inferops.node.tests.unit.module_harness import fixture, fixture_path, run_module
from ansible_collections.inferops.node.tests.unit.plugins.modules import test_irq_info, test_md_info, test_nvme_health_info
from ansible_collections.inferops.node.tests.unit.plugins.modules import test_nvme_info, test_platform_info, test_sysctl_info

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..', '..', '..')
LAB = yaml.safe_load(open(os.path.join(ROOT, 'inventories', 'lab', 'group_vars', 'local_nvme.yml')))
PROFILES = yaml.safe_load(open(os.path.join(ROOT, 'roles', 'kernel_tuning', 'vars', 'main.yml')))['__kernel_tuning_profiles']
MD_DEFAULTS = yaml.safe_load(open(os.path.join(ROOT, 'roles', 'md_raid_xfs', 'defaults', 'main.yml')))


def layers(profile, host=None):
    """The layers the kernel_tuning role builds (roles/kernel_tuning/vars/main.yml) for a profile."""
    return [{'name': 'kernel_tuning_profile=%s' % profile, 'keyed': True, 'settings': PROFILES[profile]},
            {'name': 'kernel_tuning_sysctl_host', 'keyed': True, 'settings': host or {}}]


# The lab inventory's values (inventories/lab), as the action plugin resolves them for node1.
LAB_EXPECTED = {
    'group_names': ['local_nvme'],
    'kernel_tuning_layers': layers('local_nvme'), 'kernel_tuning_thp': None,
    'nvme_sched_scheduler': LAB['nvme_sched_scheduler'], 'nvme_sched_read_ahead_kb': LAB['nvme_sched_read_ahead_kb'],
    'nvme_sched_nr_requests': None, 'nvme_sched_models': [], 'nvme_sched_serials': [],
    'md_raid_xfs_arrays': LAB['md_raid_xfs_arrays'], 'md_raid_xfs_mount_opts': MD_DEFAULTS['md_raid_xfs_mount_opts'],
    'md_raid_xfs_fstrim_timer': True, 'nvmeof_initiator_connections': [],
    'irq_affinity_rules': LAB['irq_affinity_rules'], 'irq_affinity_irqbalance': True, 'irq_affinity_banned_cpus': '',
}


class Recorded(object):
    """Runs an info module on one recorded guest, in its own directory below ``base``."""

    def __init__(self, base):
        self.base = base

    def run(self, guest_class, state, main, args=None, setup=None, **kwargs):
        return self.run_all(guest_class, state, [(main, args)], setup, **kwargs)[0]

    def run_all(self, guest_class, state, calls, setup=None, **kwargs):
        """Several modules ``[(main, args)]`` on one guest (a guest's tree takes a while to lay out)."""
        out = []
        with pytest.MonkeyPatch.context() as mp:
            guest = guest_class(pathlib.Path(tempfile.mkdtemp(prefix='guest', dir=self.base)), mp, state, **kwargs)
            if setup:
                setup(guest)
            for main, args in calls:
                failed, result = run_module(main, args or {})
                assert not failed, result
                out.append(result)
        return out


# The reads, once per pytest process, before ansible-test forks it for a test (tests/unit/before_fork.py):
# the modules that import the fixture below share them (each guest's tree takes a second or more to lay
# out). Tests copy before they change a read.
@before_fork.shared('recorded')
def record():
    rec = Recorded(before_fork.scratch('recorded'))
    md_args = {'arrays': test_md_info.REQUEST, 'units': test_md_info.UNITS}
    arrays = ('md126', 'md127')
    # irq_info and irq_pin (list_only, the lab inventory's rules as the role's filter irq_rules_normalize gives them) on irqrec
    # (fixtures/info): fresh, and converged after nvme_sched and irq_affinity.
    pins = {'rules': [irq.normalize_rule(rule) for rule in LAB['irq_affinity_rules']], 'list_only': True}
    irq_show = {'fresh': '@fresh/systemctl_irqbalance.txt', 'converged': '@converged/systemctl_show.txt'}

    def irq_reads(state):
        return rec.run_all(test_irq_info.Guest, state, [(irq_info.main, None), (irq_pin.main, pins)],
                           setup=lambda guest: guest.on(test_irq_info.SHOW, out=irq_show[state]))
    converged, fresh = irq_reads('converged'), irq_reads('fresh')
    return {
        'irq_info': converged[0],
        'irq_pin': converged[1],
        'irq_info_fresh': fresh[0],
        'irq_pin_fresh': fresh[1],
        'platform_info': rec.run(test_platform_info.Guest, 'fresh', platform_info.main),
        'nvme_health_info': rec.run(test_nvme_health_info.Guest, 'fresh', nvme_health_info.main),
        'nvme_info': rec.run(test_nvme_info.Guest, 'converged', nvme_info.main),
        'sysctl_info': rec.run(test_sysctl_info.Guest, 'converged', sysctl_info.main, {'names': test_sysctl_info.PROFILE}),
        'sysctl_fresh': rec.run(test_sysctl_info.Guest, 'fresh', sysctl_info.main, {'names': test_sysctl_info.PROFILE}),
        'md_info': rec.run(test_md_info.Guest, 'arrays', md_info.main, md_args, arrays=arrays),
        'md_degraded': rec.run(test_md_info.Guest, 'degraded', md_info.main, md_args, arrays=arrays),
        'md_fresh': rec.run(test_md_info.Guest, 'fresh', md_info.main, md_args),
        'md_misfit': rec.run(test_md_info.Guest, 'misfit', md_info.main, md_args, arrays=arrays),
        # The lab guests of local_nvme serve nothing (test_audit_serving has triton_info's and
        # compose_project_info's reads).
        'triton_info': None,
        'compose_project_info': None,
        # The two runs the storage_benchmark role recorded on the development VM (fixtures/storage_benchmark): the
        # lab guests' audit recordings have no benchmark run.
        'storage_benchmark_info': run_module(storage_benchmark_info.main, {
            'path': fixture_path('storage_benchmark', 'records')})[1],
        'storage_benchmark_none': run_module(storage_benchmark_info.main, {
            'path': fixture_path('storage_benchmark', 'no-such-directory')})[1],
        'rec': rec,
    }


@pytest.fixture
def recorded():
    return before_fork.value('recorded')


def reads(recorded, **replace):
    out = dict((name, recorded[name]) for name in audit_catalogue.INFO_MODULES)
    out.update(replace)
    return out


def results(recorded, check_id, expected=None, **replace):
    """The results of one check id over the reads, with the lab inventory's values (overridden by ``expected``)."""
    wanted = dict(LAB_EXPECTED)
    wanted.update(expected or {})
    return [r for r in audit_catalogue.evaluate_host(reads(recorded, **replace), wanted) if r['id'] == check_id]


def statuses(found):
    return dict((r['subject'], r['status']) for r in found)


def only(found):
    assert len(found) == 1, found
    return found[0]


def health_with(recorded, **smart):
    """nvme_health_info on the recorded guest with nvme0's SMART log changed (``key=value`` in its JSON)."""
    def setup(guest):
        data = json.loads(fixture('audit', 'fresh/smart-log.nvme0.json'))
        data.update(smart)
        guest.on(test_nvme_health_info.smart_log(0), out=json.dumps(data))
    return recorded['rec'].run(test_nvme_health_info.Guest, 'fresh', nvme_health_info.main, setup=setup)


# ------------------------------------------------------------------ catalogue and result shape

def test_catalogue_ids_unique_and_documented():
    ids = [c['id'] for c in audit_catalogue.catalogue()]
    assert len(ids) == len(set(ids))
    with open(os.path.join(ROOT, 'docs', 'audit.md')) as handle:
        doc = handle.read()
    assert [i for i in ids if '`%s`' % i not in doc] == []


# A check id as docs/audit.md writes it: `<family>.<name>` (the report schema's id pattern). A file name written
# the same way (`audit.html`) is not one.
DOC_ID = re.compile(r'`([a-z]+)\.([a-z_]+)`')
FILE_SUFFIXES = ('html', 'json', 'md', 'prom', 'py', 'xml', 'yml', 'yaml')


def unknown_ids(text, ids):
    """The check ids ``text`` names (a family of the catalogue's, ``storage``, ``fabric``, ...) that ``ids`` lacks."""
    families = set(i.split('.')[0] for i in ids)
    named = set('%s.%s' % found for found in DOC_ID.findall(text) if found[0] in families and found[1] not in FILE_SUFFIXES)
    return sorted(named - set(ids))


def test_every_check_id_in_the_docs_exists():
    """docs/audit.md names no check the catalogue lacks - in the catalogue table, the go-live checklist or the text."""
    ids = [c['id'] for c in audit_catalogue.catalogue()]
    with open(os.path.join(ROOT, 'docs', 'audit.md')) as handle:
        doc = handle.read()
    assert unknown_ids(doc, ids) == []
    assert unknown_ids('`storage.nvme_queues`, `fabric.read_ahead`, `audit.html`, `fstrim.timer`', ids) == ['storage.nvme_queues']
    # The seed's quick self-check: its ten items in order, each mapped to check ids but observability (Prometheus's).
    section = doc.split('\n## Go-live checklist\n', 1)[1].split('\n## ', 1)[0]
    rows = [line.split(' | ') for line in section.splitlines() if re.match(r'^\| \d+ \|', line)]
    assert [int(row[0].strip('| ')) for row in rows] == list(range(1, 11))
    mapped = dict((int(row[0].strip('| ')), re.findall(r'`([^`]+)`', row[2])) for row in rows)
    assert [item for item, named in mapped.items() if not named] == [9]
    assert sorted(set(i for named in mapped.values() for i in named) - set(ids)) == []


def test_missing_or_failed_read_is_skip_with_reason(recorded):
    found = results(recorded, 'nvme.temperature', nvme_health_info=None)
    assert only(found)['status'] == 'SKIP' and found[0]['reason'] == 'nvme_health_info was not run on this host'
    found = results(recorded, 'storage.md_present', md_info={'failed': True, 'msg': 'mdadm: command not found'})
    assert only(found)['reason'] == 'md_info failed: mdadm: command not found'


# ------------------------------------------------------------------ platform

def test_os(recorded):
    assert only(results(recorded, 'platform.os'))['status'] == 'PASS'
    warn = only(results(recorded, 'platform.os', {'audit_os_releases': ['ubuntu 24.04']}))
    assert warn['status'] == 'WARN' and warn['observed'] == 'debian 12'
    assert warn['reason'] == 'OS debian 12 (Debian GNU/Linux 12 (bookworm)) is not one of audit_os_releases'
    # The serving guest's Debian 13 passes by default too (it warned before: serving is proven only there).
    trixie = json.loads(fixture('audit', 'platform_info.trixie_serving.json'))
    assert only(results(recorded, 'platform.os', {'audit_os_releases': audit_catalogue.AUDIT_DEFAULTS['audit_os_releases']},
                        platform_info=trixie))['status'] == 'PASS'


def test_kernel(recorded):
    ok = only(results(recorded, 'platform.kernel', {'nvmeof_initiator_connections': [{'nqn': 'x'}]}))
    assert ok['status'] == 'PASS' and ok['expected'] == '>= 5.18.0' and ok['observed'] == '6.1.0-57-amd64'
    fail = only(results(recorded, 'platform.kernel', {'audit_kernel_min': '6.6', 'nvmeof_initiator_connections': [1]}))
    assert fail['status'] == 'FAIL' and fail['expected'] == '>= 6.6.0'
    assert fail['reason'] == 'kernel 6.1.0-57-amd64 is older than 6.6.0, needed by: audit_kernel_min = 6.6'


def test_numa_and_smt(recorded):
    assert only(results(recorded, 'platform.numa'))['status'] == 'SKIP'
    assert only(results(recorded, 'platform.numa', {'audit_numa_nodes': 1}))['status'] == 'PASS'
    fail = only(results(recorded, 'platform.numa', {'audit_numa_nodes': 4}))
    assert fail['status'] == 'FAIL' and fail['reason'] == '1 NUMA node(s) online ([0]), audit_numa_nodes = 4'
    assert only(results(recorded, 'platform.smt', {'audit_smt': False}))['status'] == 'PASS'
    fail = only(results(recorded, 'platform.smt', {'audit_smt': True}))
    assert fail['status'] == 'FAIL' and fail['reason'] == 'SMT is inactive (control notsupported), audit_smt = True'


def bare_metal(recorded):
    """platform_info on the recorded tree with the cpufreq/cpuidle files of a bare-metal host added
    (the TCG guest has none): CPU 1 on schedutil, C2 (400 us) enabled on CPU 0."""
    def setup(guest):
        for cpu, governor in ((0, 'performance'), (1, 'schedutil')):
            for path, value in (('cpufreq/scaling_governor', governor), ('cpuidle/state1/name', 'C1'),
                                ('cpuidle/state1/latency', '1'), ('cpuidle/state1/disable', '0'),
                                ('cpuidle/state2/name', 'C2'), ('cpuidle/state2/latency', '400'),
                                ('cpuidle/state2/disable', '0')):
                target = guest.path('/sys/devices/system/cpu/cpu%d/%s' % (cpu, path))
                os.makedirs(os.path.dirname(target), exist_ok=True)
                with open(target, 'w') as handle:
                    handle.write(value + '\n')
    return recorded['rec'].run(test_platform_info.Guest, 'fresh', platform_info.main, setup=setup)


def test_cpufreq(recorded):
    skip = only(results(recorded, 'platform.cpufreq'))
    assert skip['status'] == 'SKIP' and skip['reason'].startswith('no cpufreq on this host')
    metal = bare_metal(recorded)
    warn = only(results(recorded, 'platform.cpufreq', platform_info=metal))
    assert warn['status'] == 'WARN' and warn['reason'] == 'CPUs with another governor: schedutil on CPUs [1]'
    assert only(results(recorded, 'platform.cpufreq', {'audit_cpufreq_governor': 'schedutil'},
                        platform_info=dict(metal, cpufreq={'governors': {'schedutil': [0, 1]}})))['status'] == 'PASS'


def test_cstates(recorded):
    assert only(results(recorded, 'platform.cstates', {'audit_cpuidle_max_latency_us': 10}))['status'] == 'SKIP'
    metal = bare_metal(recorded)
    warn = only(results(recorded, 'platform.cstates', {'audit_cpuidle_max_latency_us': 10}, platform_info=metal))
    assert warn['status'] == 'WARN' and warn['reason'] == 'enabled idle states with a longer exit latency: state2 (C2, 400 us)'
    assert only(results(recorded, 'platform.cstates', {'audit_cpuidle_max_latency_us': 500},
                        platform_info=metal))['status'] == 'PASS'


# ------------------------------------------------------------------ kernel parameters

def test_sysctl_converged_with_local_override(recorded):
    found = statuses(results(recorded, 'kernel.sysctl'))
    # The recorded local file (99-zz-local.conf) overrides two keys of the profile: runtime and boot differ.
    assert found.pop('vm.swappiness') == 'FAIL' and found.pop('net.ipv4.tcp_fin_timeout') == 'FAIL'
    assert set(found.values()) == {'PASS'} and len(found) == 8
    swappiness = [r for r in results(recorded, 'kernel.sysctl') if r['subject'] == 'vm.swappiness'][0]
    assert swappiness['reason'] == ("vm.swappiness = 1 wanted (kernel_tuning_profile=local_nvme['vm.swappiness']): "
                                    'runtime 10; /etc/sysctl.d/99-zz-local.conf line 2 sets 10 (a reboot gives that)')
    assert swappiness['observed'] == {'runtime': '10', 'boot': '10', 'boot_file': '/etc/sysctl.d/99-zz-local.conf'}
    assert swappiness['fix'] == 'role kernel_tuning (tag kernel_tuning)'


def test_sysctl_fresh_fails_every_key(recorded):
    found = results(recorded, 'kernel.sysctl', sysctl_info=recorded['sysctl_fresh'])
    assert set(statuses(found).values()) == {'FAIL'}
    dirty = [r for r in found if r['subject'] == 'vm.dirty_ratio'][0]
    assert dirty['reason'].endswith('no sysctl.d file sets it (a reboot gives the kernel default)')


def test_thp(recorded):
    assert only(results(recorded, 'kernel.thp'))['status'] == 'SKIP'
    assert only(results(recorded, 'kernel.thp', {'kernel_tuning_thp': 'never'}))['status'] == 'PASS'
    fail = only(results(recorded, 'kernel.thp', {'kernel_tuning_thp': 'madvise'}))
    assert fail['status'] == 'FAIL' and fail['observed'] == 'never'


# ------------------------------------------------------------------ NVMe health

def test_link(recorded):
    skip = results(recorded, 'nvme.link')
    assert len(skip) == 6 and set(statuses(skip).values()) == {'SKIP'}
    assert 'emulated drive has no PCIe capability' in skip[0]['reason']
    health = copy.deepcopy(recorded['nvme_health_info'])
    # As a Gen4 x4 drive shows it, trained at Gen3 x2 on nvme0 (the kernel's pci.link values).
    good = {'current_speed': '16.0 GT/s PCIe', 'current_gts': 16.0, 'current_width': 4, 'max_speed': '16.0 GT/s PCIe',
            'max_gts': 16.0, 'max_width': 4, 'downgraded': False}
    for ctrl in health['controllers']:
        ctrl['pci_link'] = dict(good)
    health['controllers'][0]['pci_link'].update(current_gts=8.0, current_width=2, downgraded=True)
    found = results(recorded, 'nvme.link', nvme_health_info=health)
    assert statuses(found) == dict([('LABMODEL0 (nvme0 QEMU NVMe Ctrl)', 'FAIL')] + [
        ('%s (nvme%d QEMU NVMe Ctrl)' % (s, n), 'PASS') for n, s in enumerate(test_nvme_health_info.SERIALS) if n])
    assert found[0]['reason'] == 'link trained at 8.0 GT/s x2 where the drive and slot do 16.0 GT/s x4'


def test_temperature_in_kelvin(recorded):
    found = results(recorded, 'nvme.temperature')
    assert set(statuses(found).values()) == {'PASS'} and found[0]['observed'] == '50 C (323 K)'
    hot = results(recorded, 'nvme.temperature', nvme_health_info=health_with(recorded, temperature=358))
    assert hot[0]['status'] == 'FAIL' and hot[0]['reason'] == '85 C reaches audit_nvme_temp_fail_c 80 C'
    warm = results(recorded, 'nvme.temperature', nvme_health_info=health_with(recorded, temperature=345))
    assert warm[0]['status'] == 'WARN' and warm[0]['observed'] == '72 C (345 K)'


@pytest.mark.parametrize('check_id, change, status, reason', [
    ('nvme.critical_warning', {'critical_warning': 4}, 'FAIL', 'critical_warning = 4 (0x04)'),
    ('nvme.media_errors', {'media_errors': '3'}, 'FAIL', '3 unrecovered media error(s)'),
    ('nvme.wear', {'percent_used': 85}, 'WARN', '85 % of the rated endurance used'),
    ('nvme.wear', {'percent_used': 103}, 'FAIL', 'rated endurance used up (103 %)'),
    ('nvme.spare', {'avail_spare': 5, 'spare_thresh': 10}, 'FAIL', 'available spare 5 % below its threshold 10 %'),
])
def test_smart_log_faults(recorded, check_id, change, status, reason):
    assert set(statuses(results(recorded, check_id)).values()) == {'PASS'}
    found = results(recorded, check_id, nvme_health_info=health_with(recorded, **change))
    assert (found[0]['status'], found[0]['reason']) == (status, reason)
    assert found[0]['evidence'] == 'nvme smart-log /dev/nvme0 -o json'
    assert set(r['status'] for r in found[1:]) == {'PASS'}


def test_unreadable_smart_log_is_not_checked(recorded):
    # A drive whose temperature nobody could read is not a cool drive (seed 000: 70 degrees at peak).
    health = copy.deepcopy(recorded['nvme_health_info'])
    health['controllers'][2].update(error='nvme smart-log /dev/nvme2: rc=1 failed', temperature_c=None)
    found = results(recorded, 'nvme.temperature', nvme_health_info=health)
    assert found[2]['status'] == 'NOT_CHECKED' and found[2]['reason'] == 'nvme smart-log /dev/nvme2: rc=1 failed'
    # Even when the kernel calls a local drive not live: a PCIe drive that answers nothing is the finding.
    health['controllers'][2].update(state='dead')
    assert results(recorded, 'nvme.temperature', nvme_health_info=health)[2]['status'] == 'NOT_CHECKED'


def test_a_fabric_controller_reconnecting_has_no_smart_log_to_check(recorded):
    # compute1 of the nvmeof_pool lab while its target's port was gone: nvme smart-log answered EAGAIN.
    health = copy.deepcopy(recorded['nvme_health_info'])
    error = 'nvme smart-log /dev/nvme2: rc=1 /dev/nvme2: Resource temporarily unavailable'
    health['controllers'][2].update(error=error, temperature_c=None, transport='tcp', state='connecting')
    found = results(recorded, 'nvme.temperature', nvme_health_info=health)[2]
    assert found['status'] == 'SKIP'
    assert found['reason'] == ('fabric controller connecting, not live: no SMART log until it reconnects '
                               '(fabric.connections); ' + error)
    # Live, and still no SMART log: not checked.
    health['controllers'][2].update(state='live')
    assert results(recorded, 'nvme.temperature', nvme_health_info=health)[2]['status'] == 'NOT_CHECKED'


def test_a_failed_read_is_not_checked_and_a_critical_one_fails_the_host(recorded):
    failed = {'failed': True, 'msg': 'mdadm: command not found'}
    found = audit_catalogue.evaluate_host(reads(recorded, md_info=failed), LAB_EXPECTED)
    storage = [r for r in found if r['id'].startswith('storage.md_')]
    assert storage and set(r['status'] for r in storage) == {'NOT_CHECKED'}
    assert all(r['reason'] == 'md_info failed: mdadm: command not found' for r in storage)
    assert 'critical' in set(r['severity'] for r in storage)
    clean = [r for r in found if r['status'] != 'FAIL']
    # Nothing failed, but a critical check was not made: the host is not ready, and the report says why.
    assert audit.worst(clean) == 'FAIL'
    assert 'storage.md_present NOT_CHECKED (critical): md_info failed' in audit.why(clean)
    hosts = {'node1': {'results': clean, 'groups': ['local_nvme']}}
    report = audit_catalogue.build_report(hosts, {'local_nvme': ['node1']})
    jsonschema.validate(report, schema())
    assert report['summary']['hosts_failed'] == 1
    assert report['summary']['NOT_CHECKED'] == len([r for r in clean if r['status'] == 'NOT_CHECKED']) >= len(storage)
    lines = audit_catalogue.summary_lines(report)
    assert lines[1].startswith('FAIL node1: storage.md_present NOT_CHECKED (critical): md_info failed')
    assert any(line.startswith('NOT_CHECKED node1 storage.md_present: md_info failed') for line in lines)


def test_firmware_pin(recorded):
    assert only(results(recorded, 'nvme.firmware'))['status'] == 'SKIP'
    assert set(statuses(results(recorded, 'nvme.firmware', {'audit_nvme_firmware': {'QEMU NVMe Ctrl': '7.2.22'}})).values()) == {'PASS'}
    fail = results(recorded, 'nvme.firmware', {'audit_nvme_firmware': {'QEMU NVMe Ctrl': '8.0.0'}})
    assert fail[0]['status'] == 'FAIL' and fail[0]['reason'] == "firmware 7.2.22, audit_nvme_firmware['QEMU NVMe Ctrl'] = 8.0.0"


# ------------------------------------------------------------------ storage

def test_md_present(recorded):
    assert statuses(results(recorded, 'storage.md_present')) == {'/dev/md/models': 'PASS', '/dev/md/index': 'PASS'}
    fresh = results(recorded, 'storage.md_present', md_info=recorded['md_fresh'])
    assert statuses(fresh) == {'/dev/md/models': 'FAIL', '/dev/md/index': 'FAIL'}
    assert fresh[0]['reason'] == 'array models does not run'


def test_md_health(recorded):
    assert statuses(results(recorded, 'storage.md_health')) == {'/dev/md/models': 'PASS', '/dev/md/index': 'PASS'}
    found = results(recorded, 'storage.md_health', md_info=recorded['md_degraded'])
    assert statuses(found) == {'/dev/md/models': 'PASS', '/dev/md/index': 'FAIL'}
    assert found[1]['observed']['degraded'] == 1
    assert only(results(recorded, 'storage.md_health', md_info=recorded['md_fresh'])[:1])['status'] == 'SKIP'


def test_md_layout(recorded):
    found = results(recorded, 'storage.md_layout')
    assert statuses(found) == {'/dev/md/models': 'PASS', '/dev/md/index': 'PASS'}
    assert found[0]['observed'] == {'level': 'raid0', 'chunk_kb': 512,
                                    'members': ['LABMODEL0', 'LABMODEL1', 'LABMODEL2', 'LABMODEL3']}
    # The removed member of the degraded recording, named by serial.
    degraded = results(recorded, 'storage.md_layout', md_info=recorded['md_degraded'])
    assert degraded[1]['status'] == 'FAIL' and degraded[1]['reason'] == 'not an active member: LABINDEX1'
    arrays = copy.deepcopy(LAB['md_raid_xfs_arrays'])
    arrays[0]['chunk_kb'] = 256
    other = results(recorded, 'storage.md_layout', {'md_raid_xfs_arrays': arrays})
    assert other[0]['status'] == 'FAIL' and other[0]['reason'] == 'chunk is 512 KiB, requested 256 KiB'


def test_mount(recorded):
    found = results(recorded, 'storage.mount')
    # The recording: models mounted with the role's options, index built but not mounted.
    assert statuses(found) == {'/data/models': 'PASS', '/data/index': 'FAIL'}
    assert found[1]['reason'] == '/dev/md/index is not mounted at /data/index'
    opts = results(recorded, 'storage.mount', {'md_raid_xfs_mount_opts': 'noatime,nodiratime,largeio'})
    assert opts[0]['status'] == 'FAIL' and opts[0]['reason'] == 'options missing: largeio (applied at the next mount)'


def test_xfs_stripe(recorded):
    found = results(recorded, 'storage.xfs_stripe')
    # models: RAID0, 4 data disks, 512 KiB chunk - recorded sunit=1024, swidth=4096; index is not mounted.
    assert statuses(found) == {'/data/models': 'PASS', '/data/index': 'SKIP'}
    assert found[1]['reason'] == 'no XFS mounted at /data/index (storage.mount)'
    assert found[0]['observed'] == {'sunit': 1024, 'swidth': 4096}
    arrays = copy.deepcopy(LAB['md_raid_xfs_arrays'])
    arrays[0]['devices'] = arrays[0]['devices'][:3]
    fail = results(recorded, 'storage.xfs_stripe', {'md_raid_xfs_arrays': arrays})
    assert fail[0]['status'] == 'FAIL' and fail[0]['reason'] == (
        'XFS on /data/models has sunit=1024 swidth=4096, the array (chunk 512 KiB, 3 data disks) wants sunit=1024 swidth=3072')


def test_xfs_ftype(recorded):
    found = results(recorded, 'storage.xfs_ftype')
    assert statuses(found) == {'/data/models': 'PASS', '/data/index': 'SKIP'}
    assert found[1]['reason'] == 'nothing mounted at /data/index (storage.mount)'
    # misfit: index re-made by hand as V4 XFS (mkfs.xfs -m crc=0 -n ftype=0) and mounted.
    misfit = results(recorded, 'storage.xfs_ftype', md_info=recorded['md_misfit'])
    assert statuses(misfit) == {'/data/models': 'PASS', '/data/index': 'FAIL'}
    assert (misfit[1]['expected'], misfit[1]['observed']) == (1, 0)
    assert misfit[1]['reason'] == 'XFS on /data/index has ftype=0 (crc=0): directory entries do not record the file type'
    # md_info of an older collection (no filesystems): SKIP, not a verdict.
    older = copy.deepcopy(recorded['md_info'])
    del older['filesystems']
    assert only(results(recorded, 'storage.xfs_ftype', md_info=older))['reason'] == 'md_info returned no filesystems'


def conf_written_by_mdadm_array(recorded, names):
    """The recorded guest's mdadm.conf with the ARRAY lines mdadm_array writes for ``names`` (its own writer), as
    md_info reads them back."""
    md = copy.deepcopy(recorded['md_info'])
    text = '# mdadm.conf\nHOMEHOST <system>\nMAILADDR root\n'
    for name in names:
        array = md['arrays'][name]
        line = mdadm_array.conf_line_for(dict(array, device='/dev/md/' + name))
        text = mdadm_array.update_conf_text(text, name, '/dev/md/' + name, array['uuid'], line)
    md['conf_arrays'] = md_module.conf_arrays(text)
    return md, text


def test_md_conf_names_each_array_by_uuid_and_the_initramfs_follows(recorded):
    # The recorded guest: arrays made by mdadm --create by hand, no ARRAY line - what a boot may assemble as md127.
    found = results(recorded, 'storage.md_conf')
    assert statuses(found) == {'/dev/md/models': 'FAIL', '/dev/md/index': 'FAIL'}
    uuid = recorded['md_info']['arrays']['models']['uuid']
    assert found[0]['reason'] == ('no ARRAY line for UUID %s in /etc/mdadm/mdadm.conf: the next boot may assemble the '
                                  'array under another name (md127) and its mount fail' % uuid)
    # As md_raid_xfs writes it: PASS.
    md, text = conf_written_by_mdadm_array(recorded, ['models', 'index'])
    assert 'ARRAY /dev/md/models' in text
    assert set(statuses(results(recorded, 'storage.md_conf', md_info=md)).values()) == {'PASS'}
    # The drift: the ARRAY line of one array removed by hand.
    md_one, dummy = conf_written_by_mdadm_array(recorded, ['index'])
    assert statuses(results(recorded, 'storage.md_conf', md_info=md_one)) == {'/dev/md/models': 'FAIL',
                                                                              '/dev/md/index': 'PASS'}
    # mdadm.conf changed after the initramfs was built: the early boot reads the older copy.
    md['initramfs'].update(conf_mtime=2000.0, initrd_mtime=1000.0)
    older = results(recorded, 'storage.md_conf', md_info=md)
    assert set(statuses(older).values()) == {'FAIL'}
    assert older[0]['reason'].startswith('/etc/mdadm/mdadm.conf changed after /boot/initrd.img-')
    # The role leaves the initramfs alone (md_raid_xfs_update_initramfs false): only the lines are judged.
    assert set(statuses(results(recorded, 'storage.md_conf', {'md_raid_xfs_update_initramfs': False},
                                md_info=md)).values()) == {'PASS'}
    # md_info of an older collection (no conf_arrays): SKIP, not a verdict.
    del md['conf_arrays']
    assert only(results(recorded, 'storage.md_conf', md_info=md))['reason'] == 'md_info returned no conf_arrays'


def test_conf_arrays_reads_continuation_lines_and_any_field_order():
    text = ('DEVICE partitions\nARRAY /dev/md/models metadata=1.2\n   name=node1:models UUID=AE80:1362:161F:74FD\n'
            '#ARRAY /dev/md/old UUID=1:2:3:4\nARRAY <ignore> UUID=5:6:7:8\n')
    assert md_module.conf_arrays(text) == [
        {'device': '/dev/md/models', 'uuid': 'AE80:1362:161F:74FD', 'name': 'node1:models'},
        {'device': '<ignore>', 'uuid': '5:6:7:8', 'name': None}]
    assert md_module.conf_arrays(None) == []


def test_free_space(recorded):
    found = results(recorded, 'storage.free_space', {'audit_min_free_percent': 10})
    assert statuses(found) == {'/data/models': 'PASS', '/data/index': 'SKIP'}
    assert found[0]['observed'] == {'avail_bytes': 4155973632, 'size_bytes': 4219469824, 'avail_percent': 98.5}
    misfit = results(recorded, 'storage.free_space', {'audit_min_free_percent': 10}, md_info=recorded['md_misfit'])
    assert statuses(misfit) == {'/data/models': 'PASS', '/data/index': 'FAIL'}
    assert misfit[1]['reason'] == '/data/index has 2.7 % free (25 of 958 MiB), under 10 %'
    assert statuses(results(recorded, 'storage.free_space', {'audit_min_free_percent': 2},
                            md_info=recorded['md_misfit']))['/data/index'] == 'PASS'
    assert only(results(recorded, 'storage.free_space', {'audit_min_free_percent': None}))['reason'] == (
        'audit_min_free_percent is null')


def test_fstrim(recorded):
    assert only(results(recorded, 'storage.fstrim'))['status'] == 'PASS'
    md = copy.deepcopy(recorded['md_info'])
    md['units']['fstrim.timer'].update(enabled='disabled', active='inactive')
    fail = only(results(recorded, 'storage.fstrim', md_info=md))
    assert fail['status'] == 'FAIL' and fail['reason'] == 'fstrim.timer is disabled/inactive'
    # md_raid_xfs_fstrim_timer defaults to true on every host; the role runs on the local_nvme group only.
    skip = only(results(recorded, 'storage.fstrim', {'group_names': ['nvmeof_initiators']}, md_info=md))
    assert skip['status'] == 'SKIP' and skip['reason'] == 'not in the local_nvme group: the md_raid_xfs role does not run on this host'


def _resync_state(recorded, bitmap, speed_kb, local, window='inactive'):
    """The recorded md_info with the index array's bitmap and resync limit as md.array_status reports them, and the
    resync window's service in state ``window``."""
    md = copy.deepcopy(recorded['md_info'])
    md['arrays']['index'].update(bitmap=bitmap, sync_speed_max_kb=speed_kb, sync_speed_max_local=local)
    md['units']['inferops-md-resync-window.service'] = {'enabled': 'static', 'active': window}
    return md


def test_md_resync(recorded):
    index = copy.deepcopy(LAB['md_raid_xfs_arrays'])
    index[1]['bitmap'] = 'internal'
    throttled = {'md_raid_xfs_arrays': index, 'md_raid_xfs_resync_speed_outside_window': 2000}
    # Neither set (the lab inventory): nothing to judge; the RAID0 array never has either.
    assert set(statuses(results(recorded, 'storage.md_resync')).values()) == {'SKIP'}
    held = results(recorded, 'storage.md_resync', throttled, md_info=_resync_state(recorded, 'internal', 2000, True))
    assert statuses(held) == {'/dev/md/models': 'SKIP', '/dev/md/index': 'PASS'}
    assert held[1]['observed'] == {'bitmap': 'internal', 'sync_speed_max': '2000 KiB/s (local)'}
    # Drift: no bitmap, the system limit outside the window - both named.
    drift = results(recorded, 'storage.md_resync', throttled, md_info=_resync_state(recorded, 'none', 200000, False))
    assert drift[1]['status'] == 'FAIL' and drift[1]['reason'] == (
        'index: write-intent bitmap none, md_raid_xfs_arrays[].bitmap is internal; resync limit 200000 KiB/s (system) '
        'outside the maintenance window, md_raid_xfs_resync_speed_outside_window is 2000 KiB/s')
    # While the window's service runs, the system limit is what the role wants.
    open_window = results(recorded, 'storage.md_resync', throttled,
                          md_info=_resync_state(recorded, 'internal', 200000, False, window='active'))
    assert open_window[1]['status'] == 'PASS'
    assert open_window[1]['expected']['sync_speed_max'] == 'system (the maintenance window is open)'


def test_nvme_queue(recorded):
    found = results(recorded, 'storage.nvme_queue')
    assert len(found) == 6 and set(statuses(found).values()) == {'PASS'}
    fail = results(recorded, 'storage.nvme_queue', {'nvme_sched_read_ahead_kb': 4096, 'nvme_sched_serials': ['LABINDEX*']})
    assert statuses(fail) == {'LABINDEX0 (nvme4n1 QEMU NVMe Ctrl)': 'FAIL', 'LABINDEX1 (nvme5n1 QEMU NVMe Ctrl)': 'FAIL'}
    assert fail[0]['reason'] == 'nvme4n1 (QEMU NVMe Ctrl LABINDEX0): read_ahead_kb 2048'
    # nvme_sched runs on the local_nvme group only (its defaults hold on every host).
    skip = only(results(recorded, 'storage.nvme_queue', {'group_names': ['serving']}))
    assert skip['status'] == 'SKIP' and skip['reason'] == 'not in the local_nvme group: the nvme_sched role does not run on this host'


def test_md_readahead(recorded):
    found = results(recorded, 'storage.md_readahead')
    # Recorded: models (RAID0, 4 x 512 KiB) 4096 KiB, index (RAID10 n2, 2 drives: 1 data disk) 1024 KiB.
    assert statuses(found) == {'/dev/md/models': 'PASS', '/dev/md/index': 'PASS'}
    assert [r['observed'] for r in found] == [4096, 1024]
    assert found[0]['expected'] == '>= 4096 KiB (2 x stripe (chunk 512 KiB x 4 data disks))'
    arrays = copy.deepcopy(LAB['md_raid_xfs_arrays'])
    arrays[0]['read_ahead_kb'] = 8192
    arrays[1]['read_ahead_kb'] = 512
    found = results(recorded, 'storage.md_readahead', {'md_raid_xfs_arrays': arrays})
    assert statuses(found) == {'/dev/md/models': 'FAIL', '/dev/md/index': 'PASS'}
    assert found[0]['reason'] == 'models (md127) read-ahead 4096 KiB, the role sets 8192 KiB'
    # A larger value is kept by the role (blockdev_readahead allow_decrease=false), so it passes.
    assert found[1]['reason'] == 'larger value kept, as the role does'
    assert only(results(recorded, 'storage.md_readahead', md_info=recorded['md_fresh'])[:1])['status'] == 'SKIP'


# ------------------------------------------------------------------ IRQs

def test_irq_pins_converged(recorded):
    found = results(recorded, 'irq.pins')
    assert statuses(found) == {'irq_affinity_rules[0]': 'PASS', 'irq_affinity_rules[1]': 'PASS',
                               'irq_affinity_rules[2]': 'PASS'}
    # Rule 0 (LABMODEL0/1 by id, CPU 0): the admin queues moved; nvme1q0 had no interrupt since (recorded).
    assert found[0]['expected'] == {'nvme0q0': '0', 'nvme0q1': '0', 'nvme1q0': '0', 'nvme1q1': '0'}
    assert found[0]['reason'] == ('kernel-managed, left to the kernel: 32 (nvme0q2), 37 (nvme1q2); '
                                  'move pending until the next interrupt: 35 (nvme1q0) still on CPU 1')


def test_irq_pins_fresh_fails(recorded):
    found = results(recorded, 'irq.pins', irq_pin=recorded['irq_pin_fresh'])
    # Before the role: nvme1q0 on CPU 1 where rule 0 wants CPU 0; the others happen to sit on their targets.
    assert statuses(found) == {'irq_affinity_rules[0]': 'FAIL', 'irq_affinity_rules[1]': 'PASS',
                               'irq_affinity_rules[2]': 'PASS'}
    assert found[0]['reason'].startswith('IRQ 35 (nvme1q0): smp_affinity_list 1, the rule wants 0; kernel-managed')
    assert found[0]['fix'] == 'role irq_affinity (tag irq_affinity)'
    assert only(results(recorded, 'irq.pins', {'irq_affinity_rules': []}))['reason'] == 'no irq_affinity_rules for this host'
    skipped = only(results(recorded, 'irq.pins', irq_pin={'skipped': True}))
    assert skipped['status'] == 'SKIP' and skipped['reason'] == 'irq_pin was not run on this host'


def test_irqbalance(recorded):
    ok = only(results(recorded, 'irq.irqbalance'))
    assert ok['status'] == 'PASS' and ok['observed'] == {
        'active': True, 'policyscript': '/usr/local/sbin/inferops-irq-pin', 'banned_cpus': None}
    # The fresh guest: the image's irqbalance, stock /etc/default/irqbalance.
    fresh = only(results(recorded, 'irq.irqbalance', irq_info=recorded['irq_info_fresh']))
    assert fresh['status'] == 'FAIL' and fresh['reason'] == (
        'policy script none, the role sets /usr/local/sbin/inferops-irq-pin (irqbalance may move the pinned IRQs)')
    banned = only(results(recorded, 'irq.irqbalance', {'irq_affinity_banned_cpus': '1'}))
    assert banned['status'] == 'FAIL' and banned['reason'] == 'banned CPUs none, irq_affinity_banned_cpus = "1"'
    assert only(results(recorded, 'irq.irqbalance', {'irq_affinity_irqbalance': False}))['status'] == 'SKIP'


# ------------------------------------------------------------------ fleet and report

def fleet_hosts(recorded, firmware=None, hot=None):
    """Three lab hosts from the recorded reads; ``firmware``/``hot``: host -> nvme0's revision / temperature (K)."""
    hosts = {}
    for host in ('node1', 'node2', 'node3'):
        health = copy.deepcopy(recorded['nvme_health_info'])
        if firmware and host in firmware:
            health['controllers'][0]['firmware'] = firmware[host]
        if hot and host in hot:
            health['controllers'][0].update(temperature_k=hot[host], temperature_c=hot[host] - 273)
        host_reads = reads(recorded, nvme_health_info=health)
        hosts[host] = {'results': audit_catalogue.evaluate_host(host_reads, LAB_EXPECTED),
                       'drives': health['controllers'], 'groups': ['local_nvme']}
    return hosts


GROUPS = {'local_nvme': ['node1', 'node2', 'node3']}


def test_fleet_firmware_outlier_named(recorded):
    report = audit_catalogue.build_report(fleet_hosts(recorded), GROUPS)
    assert [r['status'] for r in report['fleet'] if r['id'] == 'fleet.firmware'] == ['PASS']
    report = audit_catalogue.build_report(fleet_hosts(recorded, firmware={'node2': '7.1.0'}), GROUPS)
    firmware = [r for r in report['fleet'] if r['id'] == 'fleet.firmware']
    assert len(firmware) == 1 and firmware[0]['status'] == 'WARN' and firmware[0]['expected'] == '7.2.22'
    assert firmware[0]['reason'] == '1 drive(s) on 7.1.0 where 17 of 18 run 7.2.22: node2:LABMODEL0 (nvme0)'


def test_fleet_temperature_outlier(recorded):
    report = audit_catalogue.build_report(fleet_hosts(recorded), GROUPS)
    assert [r['status'] for r in report['fleet'] if r['id'] == 'fleet.temperature'] == ['PASS']
    report = audit_catalogue.build_report(fleet_hosts(recorded, hot={'node3': 338}), GROUPS)
    temp = [r for r in report['fleet'] if r['id'] == 'fleet.temperature'][0]
    assert temp['status'] == 'WARN' and temp['reason'] == 'warmer than the fleet: node3:LABMODEL0 (nvme0) 65 C'


def test_fleet_group_outlier(recorded):
    hosts = fleet_hosts(recorded)
    assert set(r['status'] for r in audit_catalogue.build_report(hosts, GROUPS)['fleet'] if r['id'] == 'fleet.group') == {'PASS'}
    hosts['node2']['results'] = audit_catalogue.evaluate_host(reads(recorded, md_info=recorded['md_degraded']), LAB_EXPECTED)
    report = audit_catalogue.build_report(hosts, GROUPS)
    group = dict((r['subject'], r) for r in report['fleet'] if r['id'] == 'fleet.group')
    assert group['node2 in local_nvme']['status'] == 'WARN' and group['node1 in local_nvme']['status'] == 'PASS'
    assert 'storage.md_health /dev/md/index: FAIL where the group has PASS' in group['node2 in local_nvme']['reason']


def schema():
    with open(os.path.join(ROOT, 'schemas', 'audit_report.schema.json')) as handle:
        return json.load(handle)


def test_report_is_valid_and_failures_first(recorded):
    hosts = fleet_hosts(recorded)
    hosts['node3']['results'] = audit_catalogue.evaluate_host(reads(recorded, md_info=recorded['md_degraded']), LAB_EXPECTED)
    for host in ('node1', 'node2'):
        # Two clean hosts: without the failures of the recordings (local sysctl override, index not mounted).
        hosts[host]['results'] = [r for r in hosts[host]['results'] if r['status'] != 'FAIL']
    report = audit_catalogue.build_report(hosts, GROUPS, meta={'generated': '2026-12-02T03:00:00Z', 'check_mode': True})
    jsonschema.Draft202012Validator.check_schema(schema())
    jsonschema.validate(report, schema())
    # A JSON round trip keeps it valid (the file the action writes).
    jsonschema.validate(json.loads(json.dumps(report)), schema())
    assert [e['host'] for e in report['hosts']] == ['node3', 'node1', 'node2']
    assert report['status'] == 'FAIL' and report['summary']['hosts_failed'] == 1
    assert report['hosts'][0]['results'][0]['status'] == 'FAIL'
    lines = audit_catalogue.summary_lines(report)
    assert lines[0].startswith('node audit: FAIL - 3 host(s), 1 failed; ')
    assert any(line.startswith('FAIL node3 storage.md_health [/dev/md/index]: ') and
               line.endswith('(md_raid_xfs reports a degraded array, it never adds members))') for line in lines)


def test_schema_refuses_a_bad_result(recorded):
    report = audit_catalogue.build_report(fleet_hosts(recorded), GROUPS)
    report['hosts'][0]['results'][0]['status'] = 'BROKEN'
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(report, schema())
    report = audit_catalogue.build_report(fleet_hosts(recorded), GROUPS)
    failing = [r for r in report['hosts'][0]['results'] if r['status'] == 'FAIL'][0]
    failing['reason'] = None
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(report, schema())


def test_worst_and_summary():
    check = audit.Check('x.y', 't', 'minor', 'e', 'f')
    found = [check.passed(None, 1, 1), check.skip('why'), check.warn('a', 1, 2, 'r')]
    assert audit.worst(found) == 'WARN'
    assert audit.summary(found) == {'FAIL': 0, 'NOT_CHECKED': 0, 'WARN': 1, 'SKIP': 1, 'PASS': 1}
    assert audit.worst([check.skip('why')]) == 'PASS'
    # A check that could not be evaluated is never a PASS; a critical one fails the host.
    assert audit.worst(found + [check.not_checked('read failed')]) == 'NOT_CHECKED'
    major = audit.Check('x.z', 't', 'major', 'e', 'f')
    assert audit.worst(found + [major.not_checked('read failed')]) == 'NOT_CHECKED'
    critical = audit.Check('x.c', 't', 'critical', 'e', 'f')
    assert audit.worst(found + [critical.not_checked('read failed')]) == 'FAIL'
    assert audit.why([check.passed(None, 1, 1)]) == ''


def test_report_written_on_a_lab_guest_is_valid():
    """The report playbooks/audit.yml --check wrote for a fresh lab guest (fixtures/audit/README.md)."""
    report = json.loads(fixture('audit', 'report_fresh_guest_check.json'))
    jsonschema.validate(report, schema())
    assert report['meta']['check_mode'] is True and report['status'] == 'FAIL'
    assert report['summary'] == {'FAIL': 18, 'WARN': 0, 'SKIP': 20, 'PASS': 35, 'hosts': 1, 'hosts_failed': 1}
    by_id = {}
    for r in report['hosts'][0]['results']:
        by_id.setdefault(r['id'], set()).add(r['status'])
    # Fresh guest: no arrays, no sysctl drop-in, read-ahead 128; the drives are healthy at 323 K.
    assert by_id['storage.md_present'] == {'FAIL'} and by_id['kernel.sysctl'] == {'FAIL'}
    assert by_id['storage.nvme_queue'] == {'FAIL'} and by_id['nvme.temperature'] == {'PASS'}
    assert by_id['nvme.link'] == {'SKIP'} and by_id['platform.kernel'] == {'PASS'}


def test_failures_first_keeps_the_catalogue_order_within_a_status():
    check = audit.Check('x.y', 'title', 'minor', 'evidence', 'fix')
    results = [check.passed('a', 1, 1), check.skip('why', 'b'), check.fail('c', 1, 2, 'no'), check.warn('d', 1, 2, 'hm'),
               check.fail('e', 1, 3, 'no')]
    assert [r['subject'] for r in audit.failures_first(results)] == ['c', 'e', 'd', 'b', 'a']
    assert [audit.ORDER[s] for s in audit.STATUSES] == [0, 1, 2, 3, 4]


def test_failures_first_puts_critical_before_major_before_minor_within_a_status():
    minor, major, critical = (audit.Check('x.' + s, 't', s, 'e', 'f') for s in ('minor', 'major', 'critical'))
    results = [minor.fail('a', 1, 2, 'no'), major.not_checked('r', 'b'), critical.fail('c', 1, 2, 'no'),
               major.fail('d', 1, 2, 'no'), critical.not_checked('r', 'e'), minor.warn('f', 1, 2, 'hm')]
    assert [r['subject'] for r in audit.failures_first(results)] == ['c', 'd', 'a', 'e', 'b', 'f']
    assert audit.why(results, limit=2) == ('x.critical [c] FAIL (critical): no; x.major [d] FAIL (major): no; '
                                           'and 4 more')


def test_a_check_sees_only_the_variables_it_declares():
    seen = {}

    def func(check, reads, expected):
        seen.update(expected)
        return [check.passed(None, None, None)]

    check = audit.Check('x.y', 'title', 'minor', 'evidence', 'fix', func, variables=('md_raid_xfs_arrays',))
    check.evaluate({}, {'md_raid_xfs_arrays': [], 'nvme_sched_scheduler': 'none', 'audit_min_free_percent': 10,
                        'group_names': ['local_nvme']})
    assert seen == {'md_raid_xfs_arrays': [], 'audit_min_free_percent': 10, 'group_names': ['local_nvme']}


def test_the_resolved_variables_are_what_the_checks_and_the_health_check_declare():
    declared = set(name for check in audit_catalogue.HOST_CHECKS for name in check.variables)
    assert declared <= set(audit_catalogue.VARIABLES)
    assert {'md_raid_xfs_arrays', 'kernel_tuning_layers', 'triton_compose_params', 'k8s_node_labels_file'} <= set(
        audit_catalogue.VARIABLES)
