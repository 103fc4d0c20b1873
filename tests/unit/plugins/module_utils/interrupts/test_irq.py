# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""module_utils/interrupts/irq.py replayed on the recorded local_nvme lab guest (fixtures/proc_interrupts,
fixtures/irq, sysfs snapshot ``fresh``: 2 vCPUs, one NUMA node).

The kernel's EIO for a kernel-managed IRQ is simulated: at the write through ``FakeSystem.fail_writes``
(as recorded in fixtures/irq/managed_write_check.txt), and at the close through a fake ``os.close``.
The last tests run the irq_affinity role's host script on the same files, imported as the package
``inferops`` exactly as the role installs them.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import subprocess
import sys

import pytest

from ansible_collections.inferops.node.plugins.module_utils.common import sysfs
from ansible_collections.inferops.node.plugins.module_utils.interrupts import irq
from ansible_collections.inferops.node.tests.unit.host_package import installed_script
from ansible_collections.inferops.node.tests.unit.local_nvme_fixtures import FakeSystem, fixture

AFF = '/proc/irq/%d/smp_affinity_list'


@pytest.fixture
def guest(tmp_path, monkeypatch):
    return FakeSystem(tmp_path, monkeypatch, 'fresh')


def recorded_writes():
    """fixtures/irq/managed_write_check.txt: [(irq, name, value, errno or None)]."""
    rows = []
    for line in fixture('irq', 'managed_write_check.txt').splitlines():
        match = re.match(r'^(\d+) (\S+) (\S+) (?:write ok|errno=(\d+) .*)$', line)
        assert match, line
        rows.append((int(match.group(1)), match.group(2), match.group(3),
                     int(match.group(4)) if match.group(4) else None))
    return rows


def compiled(*rules, **kwargs):
    return irq.match_rules(irq.compile_rules(list(rules), kwargs.get('online')), kwargs['names'])


# ---------------------------------------------------------------- reading

def test_parse_interrupts_numbered_lines_only():
    entries = irq.parse_interrupts(fixture('proc_interrupts', 'fresh.txt'))
    assert len(entries) == 33 and [e['irq'] for e in entries][:3] == [0, 1, 4]
    assert entries[-1] == {'irq': 48, 'counts': [0, 3], 'chip': 'PCI-MSI', 'label': 'nvme4q2'}
    assert irq.parse_interrupts('') == []


def test_irq_names_without_sysfs_actions_use_the_label(tmp_path, monkeypatch):
    monkeypatch.setattr(sysfs, 'ROOT', str(tmp_path))
    names = irq.irq_names(fixture('proc_interrupts', 'fresh.txt'))
    assert names[27] == 'ahci[0000:00:1f.2]' and names[33] == 'nvme0q1' and names[0] == 'timer'


def test_irq_names_prefer_sysfs_actions(guest):
    names = irq.irq_names(guest.read('/proc/interrupts'))
    for number, name, dummy, dummy2 in recorded_writes():
        assert names[number] == name


def test_online_cpus(guest, tmp_path, monkeypatch):
    assert irq.online_cpus() == [0, 1]
    monkeypatch.setattr(sysfs, 'ROOT', str(tmp_path / 'empty'))
    with pytest.raises(irq.IrqError, match='cannot read the online CPUs'):
        irq.online_cpus()


# ---------------------------------------------------------------- rules

@pytest.mark.parametrize('rule, needle', [
    ({'selector': 'nvme(', 'cpus': '0'}, 'rules[0].selector = "nvme(": not a valid regular expression'),
    ({'selector': None, 'cpus': '0'}, 'rules[0]: selects no IRQ - give one of selector (IRQ-name regex), serial, by_id'),
    ({'selector': ' ', 'cpus': '0'}, 'rules[0].selector = " ": must be a non-empty regular expression'),
    ({'selector': 'nvme', 'policy': 'round', 'cpus': '0'}, 'rules[0].policy = "round": must be one of cpus, spread, local'),
    ({'selector': 'nvme', 'policy': 'spread'}, 'rules[0].cpus: required with policy spread'),
    ({'selector': 'nvme', 'cpus': ' '}, 'rules[0].cpus: required with policy cpus'),
    ({'selector': 'nvme', 'cpus': '3-1'}, 'rules[0].cpus = "3-1": not a valid CPU list'),
    ({'selector': 'nvme', 'cpus': []}, 'rules[0].cpus = []: empty'),
    ({'selector': 'nvme', 'cpus': '0-3'}, 'rules[0].cpus = "0-3": CPU(s) 2-3 not online (online: 0-1)'),
    ({'selector': 'nvme', 'cpus': '0', 'cpu': 1},
     'rules[0]: unknown key "cpu" (known: selector, serial, by_id, pci_address, md_array, policy, cpus)'),
])
def test_compile_rule_errors(rule, needle):
    with pytest.raises(irq.IrqError) as err:
        irq.compile_rule(rule, 0, [0, 1])
    assert needle in str(err.value)


def test_compile_rule_defaults_and_online_check_is_optional():
    rule = irq.compile_rule({'selector': '^nvme', 'policy': 'local'}, 2)
    assert (rule['index'], rule['policy'], rule['cpus'], rule['matched']) == (2, 'local', None, [])
    assert irq.compile_rule({'selector': 'x', 'cpus': '0-3'}, 0)['cpus'] == [0, 1, 2, 3]
    assert irq.compile_rule({'selector': 'x', 'cpus': [3, '1']}, 0)['cpus'] == [1, 3]
    assert irq.not_online([0, 2, 3], [0, 1]) == [2, 3] and irq.not_online(None, [0]) == []
    with pytest.raises(irq.IrqError, match='at least one rule'):
        irq.compile_rules([])


def test_first_matching_rule_wins():
    names = dict((e['irq'], e['label']) for e in irq.parse_interrupts(fixture('proc_interrupts', 'fresh.txt')))
    rules = compiled({'selector': r'^nvme0q0$', 'cpus': '0'}, {'selector': r'^nvme\d+q0$', 'cpus': '1'},
                     {'selector': 'nvme', 'policy': 'local'}, names=names)
    assert [r['matched'] for r in rules] == [[31], [32, 35, 38, 39, 40], [33, 34, 36, 37, 41, 42, 43, 44, 45, 46, 47, 48]]


# ---------------------------------------------------------------- plan

def test_plan_policies(guest):
    names = irq.irq_names(guest.read('/proc/interrupts'))
    rules = compiled({'selector': r'^nvme0q', 'cpus': '0'}, {'selector': r'^nvme\dq0$', 'policy': 'spread', 'cpus': '0-1'},
                     {'selector': r'^ahci', 'policy': 'local'}, {'selector': r'^nvme1q1$', 'policy': 'local', 'cpus': '1'},
                     names=names, online=[0, 1])
    entries = dict((e['irq'], e) for e in irq.plan(rules, names, [0, 1]))
    assert sorted(entries) == [27, 31, 32, 33, 34, 35, 38, 39, 40, 45]
    assert [(entries[i]['before'], entries[i]['target'], entries[i]['status']) for i in (31, 33, 34)] == [
        ('1', '0', 'changed'), ('0', '0', 'unchanged'), ('1', '0', 'changed')]
    assert [entries[i]['target'] for i in (32, 35, 38, 39, 40)] == ['0', '1', '0', '1', '0']
    assert (entries[27]['node'], entries[27]['target'], entries[27]['msg']) == (
        None, '0-1', 'NUMA node unknown; using all online CPUs')
    assert (entries[45]['node'], entries[45]['target'], entries[45]['msg']) == (0, '1', None)
    assert entries[33]['after'] == '0' and entries[31]['after'] == '0' and entries[31]['before'] == '1'
    assert guest.read(AFF % 31) == '1\n'


def test_plan_unreadable_affinity_fails(guest):
    os.unlink(guest.path(AFF % 31))
    names = irq.irq_names(guest.read('/proc/interrupts'))
    entry = irq.plan(compiled({'selector': r'^nvme0q0$', 'cpus': '0'}, names=names), names, [0, 1])[0]
    assert (entry['status'], entry['msg']) == ('failed', 'cannot read %s' % (AFF % 31))


# ---------------------------------------------------------------- apply

def entries_for_recorded_writes():
    return [{'irq': number, 'name': name, 'target': value, 'status': 'changed', 'after': None, 'effective': None,
             'msg': None} for number, name, value, dummy in recorded_writes()]


def test_apply_eio_at_write_is_managed(guest):
    """As recorded: writing nvme0q0 works, nvme0q1/nvme0q2 answer EIO (kernel-managed)."""
    for number, dummy, dummy2, code in recorded_writes():
        if code:
            guest.fail_writes(AFF % number, code)
    entries = irq.apply(entries_for_recorded_writes())
    assert [(e['irq'], e['status']) for e in entries] == [(31, 'changed'), (33, 'managed'), (34, 'managed')]
    assert entries[1]['msg'] == 'kernel-managed IRQ: affinity write refused (EIO)'
    assert [e['after'] for e in entries] == ['1', '0', '1']
    assert entries[0]['effective'] == guest.read('/proc/irq/31/effective_affinity_list').strip()


def test_apply_eio_at_close_is_managed(guest, monkeypatch):
    """sysfs stores may fail only at close(); the explicit close makes that EIO visible too."""
    real_open, real_close = os.open, os.close
    refused = {}

    def fake_open(path, flags, *args):
        fd = real_open(path, flags, *args)
        if flags & os.O_WRONLY and path == guest.path(AFF % 33):
            refused[fd] = path
        return fd

    def fake_close(fd):
        real_close(fd)
        if refused.pop(fd, None):
            raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(os, 'open', fake_open)
    monkeypatch.setattr(os, 'close', fake_close)
    entries = irq.apply([dict(e, target='1') for e in entries_for_recorded_writes()[:2]])
    assert [e['status'] for e in entries] == ['changed', 'managed']


def test_apply_other_errors_and_readback_fail(guest, monkeypatch):
    guest.fail_writes(AFF % 31, errno.EINVAL)
    entries = irq.apply(entries_for_recorded_writes()[:1])
    assert entries[0]['status'] == 'failed' and 'Invalid argument' in entries[0]['msg']
    monkeypatch.setattr(sysfs, 'write_attr', lambda path, value: None)
    entries = irq.apply([dict(entries_for_recorded_writes()[1], target='1')])
    assert (entries[0]['status'], entries[0]['msg']) == ('failed', "wrote 1 but the kernel reports '0'")


def test_apply_skips_entries_without_change(guest, monkeypatch):
    monkeypatch.setattr(sysfs, 'write_attr', lambda path, value: pytest.fail('wrote %s' % path))
    entries = [dict(e, status=s) for e, s in zip(entries_for_recorded_writes(), ('unchanged', 'failed', 'managed'))]
    assert [e['status'] for e in irq.apply(entries)] == ['unchanged', 'failed', 'managed']


# ---------------------------------------------------------------- the host copy

@pytest.fixture
def host_script(guest, tmp_path):
    """The role's script run from the zip application the role installs (the package inferops inside it)."""
    lib = tmp_path / 'usr_local_lib'
    with installed_script('irq_affinity', 'inferops_irq_pin.py', lib) as script:
        package = str(lib / 'inferops_irq_pin.pyz')
        assert sys.path[0] == package and script.irq.__file__ == os.path.join(package, 'inferops', 'interrupts', 'irq.py')
        assert script.irq.sysfs is not sysfs
        script.irq.sysfs.ROOT = guest.root
        yield script


def rules_file(tmp_path, rules):
    path = tmp_path / 'irq-affinity.json'
    path.write_text(json.dumps(rules))
    return str(path)


def test_host_script_apply(guest, host_script, tmp_path, capsys):
    for number, dummy, dummy2, code in recorded_writes():
        if code:
            guest.fail_writes(AFF % number, code)
    path = rules_file(tmp_path, [{'selector': r'^nvme0q\d+$', 'policy': 'cpus', 'cpus': '0'},
                                 {'selector': r'^nvme1q0$', 'policy': 'local', 'cpus': None}])
    assert host_script.main(['inferops-irq-pin.py', 'apply', path]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == ['IRQ 31 (nvme0q0) -> 0', 'IRQ 32 (nvme1q0) -> 0-1',
                   'inferops-irq-pin: 2 pinned, 1 already pinned, 1 kernel-managed, 0 failed, 0 move(s) pending']
    assert guest.read(AFF % 31) == '0' and guest.read(AFF % 32) == '0-1' and guest.read(AFF % 34) == '1\n'
    assert host_script.main(['inferops-irq-pin.py', path]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == (
        'inferops-irq-pin: 0 pinned, 3 already pinned, 1 kernel-managed, 0 failed, 0 move(s) pending')


def ban_verdicts(text):
    """irq.BAN_LIST's text: (header, {irq: (name, verdict)})."""
    lines = text.splitlines()
    rows = [line.rsplit(' ', 1) for line in lines[1:]]
    return lines[0], dict((int(head.split(' ', 1)[0]), (head.split(' ', 1)[1], verdict)) for head, verdict in rows)


def test_host_script_apply_leaves_the_policy_verdicts(guest, host_script, tmp_path):
    """Every IRQ of /proc/interrupts with its name and what policy mode answers for it, under the rules' hash."""
    path = rules_file(tmp_path, [{'selector': r'^nvme0q\d+$', 'policy': 'cpus', 'cpus': '0'},
                                 {'selector': r'^nvme1q0$', 'policy': 'local', 'cpus': None}])
    host_script.main(['inferops-irq-pin.py', 'apply', path])
    header, verdicts = ban_verdicts(guest.read(irq.BAN_LIST))
    with open(path, 'rb') as handle:
        assert header == 'rules ' + hashlib.sha256(handle.read()).hexdigest()
    assert verdicts == dict((number, (name, 'ban' if number in (31, 32, 33, 34) else 'keep'))
                            for number, name in irq.irq_names(guest.read('/proc/interrupts')).items())
    assert verdicts[33] == ('nvme0q1', 'ban') and verdicts[35] == ('nvme2q0', 'keep')


WRAPPER = os.path.join(os.path.dirname(__file__), '..', '..', '..', '..', '..', 'roles', 'irq_affinity', 'files',
                       'inferops-irq-pin')
PYTHON_LINE = 'exec /usr/bin/python3 -ES /usr/local/lib/inferops-irq-pin.pyz "$@"'


@pytest.fixture
def wrapper(guest, tmp_path):
    """``wrapper(*args)``: the role's shell wrapper on the guest's files (its absolute paths moved under the
    guest's root, its rules file to the one ``rules_file`` writes; the Python line prints ``python <args>``),
    returns its output."""
    with open(WRAPPER) as handle:
        text = handle.read()
    moved = {'/run/inferops/irq-ban': guest.path(irq.BAN_LIST), '/etc/inferops/irq-affinity.json': str(tmp_path / 'irq-affinity.json'),
             '"/sys/kernel/irq/': '"' + guest.path('/sys/kernel/irq') + '/', PYTHON_LINE: 'echo "python $*"'}
    for old, new in moved.items():
        assert old in text
        text = text.replace(old, new)
    script = tmp_path / 'inferops-irq-pin'
    script.write_text(text)

    def run(*args):
        done = subprocess.run(['sh', str(script)] + list(args), capture_output=True, text=True, check=True)
        return done.stdout
    return run


def test_wrapper_answers_from_the_verdicts_of_this_rules_file(guest, host_script, wrapper, tmp_path):
    """Policy mode without Python for a listed IRQ of the same name and rules; Python for everything else."""
    assert wrapper('/devices/pci0000:00/0000:00:04.0', '33') == 'python /devices/pci0000:00/0000:00:04.0 33\n'
    path = rules_file(tmp_path, [{'selector': r'^nvme0q\d+$', 'cpus': '0'}])
    host_script.main(['inferops-irq-pin.py', 'apply', path])
    assert wrapper('/devices/pci0000:00/0000:00:04.0', '33') == 'ban=true\n'
    assert wrapper('/devices/pci0000:00/0000:00:05.0', '35') == ''
    # Not answered from the list: an IRQ it does not name, apply mode, a number that is not one.
    assert wrapper('/devices/x', '999') == 'python /devices/x 999\n'
    assert wrapper('apply', path) == 'python apply %s\n' % path
    assert wrapper('/devices/x', '3x') == 'python /devices/x 3x\n'
    # The IRQ number now names another device (hot-plugged since the list was written).
    with open(guest.path('/sys/kernel/irq/35/actions'), 'w') as handle:
        handle.write('nvme9q0\n')
    assert wrapper('/devices/pci0000:00/0000:00:05.0', '35') == 'python /devices/pci0000:00/0000:00:05.0 35\n'
    # Rules changed since the list was written.
    rules_file(tmp_path, [{'selector': r'^nvme1q\d+$', 'cpus': '0'}])
    assert wrapper('/devices/pci0000:00/0000:00:04.0', '33') == 'python /devices/pci0000:00/0000:00:04.0 33\n'


def test_host_script_offline_rule_is_skipped(guest, host_script, tmp_path, capsys):
    path = rules_file(tmp_path, [{'selector': r'^nvme0q0$', 'cpus': '0-3'}, {'selector': r'^nvme\dq0$', 'cpus': '1'}])
    assert host_script.main(['inferops-irq-pin.py', 'apply', path]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == 'rule 0 (^nvme0q0$): CPUs 0-3 not online (online 0-1), skipped'
    # Pending: 35 (nvme2q0, recorded with smp_affinity_list 1 but effective_affinity_list 0) and 39 (nvme5q0,
    # just moved 0 -> 1; the copy's effective_affinity_list stays 0 as the kernel's does until the next interrupt).
    assert out[-1] == 'inferops-irq-pin: 1 pinned, 4 already pinned, 0 kernel-managed, 1 failed, 2 move(s) pending'
    assert guest.read(AFF % 31) == '1\n'


def test_host_script_policy_mode(guest, host_script, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(host_script, 'RULES', rules_file(tmp_path, [{'selector': r'^nvme\d+q\d+$', 'cpus': '0'}]))
    assert host_script.main(['inferops-irq-pin', '/devices/pci0000:00/0000:00:04.0', '33']) == 0
    assert capsys.readouterr().out == 'ban=true\n'
    assert host_script.main(['inferops-irq-pin', '/devices/pci0000:00/0000:00:1f.2', '27']) == 0
    assert capsys.readouterr().out == ''
    monkeypatch.setattr(host_script, 'RULES', str(tmp_path / 'missing.json'))
    assert host_script.main(['inferops-irq-pin', '/devices/x', '33']) == 0
    assert capsys.readouterr().out == ''


def test_host_script_device_rules(guest, host_script, tmp_path, monkeypatch, capsys):
    """At boot the script resolves serials and by-id links anew, reading the drives through the shipped
    nvme_devices.py (recorded guest with shuffled drives, fixtures/sysfs/shuffled_fresh: LABMODEL1 = nvme5 =
    0000:00:08.0, IRQs 46, 47, 48); a drive that is not there pins nothing and fails the unit."""
    guest.load('shuffled_fresh')
    guest.fail_writes(AFF % 47)
    guest.fail_writes(AFF % 48)
    path = rules_file(tmp_path, [{'by_id': ['/dev/disk/by-id/nvme-QEMU_NVMe_Ctrl_LABMODEL1'], 'cpus': '0'},
                                 {'serial': ['NOSUCH'], 'cpus': '0'}])
    assert host_script.main(['inferops-irq-pin.py', 'apply', path]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith('inferops-irq-pin: rules[1].serial[0] = "NOSUCH": no NVMe controller with this serial')
    assert out[-1] == 'inferops-irq-pin: 1 pinned, 1 already pinned, 1 kernel-managed, 0 failed, 1 move(s) pending'
    assert guest.read(AFF % 46) == '0'
    monkeypatch.setattr(host_script, 'RULES', path)
    assert host_script.main(['inferops-irq-pin', '/devices/pci0000:00/0000:00:08.0', '47']) == 0
    assert capsys.readouterr().out == 'ban=true\n'
    assert host_script.main(['inferops-irq-pin', '/devices/pci0000:00/0000:00:03.0', '31']) == 0
    assert capsys.readouterr().out == ''


# ---------------------------------------------------------------- managed IRQs without writing

BOOT1 = '0aaa93df-6d93-440e-a00f-996e2ae5b013'  # fixtures/irq/irqlab_boot1_*/attrs.txt
BOOT2 = '9e186dae-7f3d-4315-ac25-edb909e31c92'  # fixtures/irq/irqlab_boot2_rebooted/attrs.txt


def test_load_record_only_of_this_boot():
    text = fixture('irq', 'irqlab_boot1_converged', 'record.json')
    known = irq.load_record(text, BOOT1)
    assert known == {'nvme0q2': True, 'nvme1q2': True, 'nvme2q1': True, 'nvme3q1': True, 'nvme3q0': False}
    assert irq.load_record(text, BOOT2) == {}
    assert irq.load_record(text, None) == {} and irq.load_record(None, BOOT1) == {}
    assert irq.load_record('{"version": 1, "boot_id": "%s", "managed": [' % BOOT1, BOOT1) == {}
    assert irq.load_record(json.dumps(dict(json.loads(text), version=2)), BOOT1) == {}


def test_update_record_merges_this_boot_and_drops_another():
    text = fixture('irq', 'irqlab_boot1_converged', 'record.json')
    written = [{'name': 'nvme3q0', 'status': 'changed', 'managed_source': 'write'},
               {'name': 'nvme0q2', 'status': 'managed', 'managed_source': 'write'},
               {'name': 'nvme0q1', 'status': 'unchanged', 'managed_source': None}]
    assert irq.update_record(text, BOOT1, written) is None  # nothing new
    new = json.loads(irq.update_record(text, BOOT1, written + [
        {'name': 'nvme9q0', 'status': 'changed', 'managed_source': 'write'}]))
    assert new['writable'] == ['nvme3q0', 'nvme9q0'] and len(new['managed']) == 4
    assert json.loads(irq.update_record(text, BOOT2, written)) == {
        'version': 1, 'boot_id': BOOT2, 'managed': ['nvme0q2'], 'writable': ['nvme3q0']}
    assert irq.update_record(text, None, written) is None


def test_debugfs_managed(guest):
    """Debian 12's kernel has no CONFIG_GENERIC_IRQ_DEBUGFS (fixtures/irq/irqlab_*/debugfs.txt), so this file
    could not be recorded; it is laid out as kernel/irq/debugfs.c (irq_debug_show) prints it."""
    assert irq.debugfs_managed(33) is None
    path = guest.path(irq.DEBUGFS_IRQ % 33)
    os.makedirs(os.path.dirname(path))
    with open(path, 'w') as handle:
        handle.write('handler:  handle_edge_irq\ndevice:   0000:00:04.0\nstatus:   0x00000000\n'
                     'istate:   0x00000000\nddepth:   0\nwdepth:   0\ndstate:   0x33601200\n'
                     '            IRQD_ACTIVATED\n            IRQD_IRQ_STARTED\n            IRQD_SINGLE_TARGET\n'
                     '            IRQD_AFFINITY_MANAGED\n            IRQD_AFFINITY_ON_ACTIVATE\n'
                     'node:     0\naffinity: 0\neffectv:  0\npending:  \n')
    assert irq.debugfs_managed(33) is True
    with open(path, 'w') as handle:
        handle.write('handler:  handle_edge_irq\ndstate:   0x00401200\n            IRQD_ACTIVATED\nnode:     0\n')
    assert irq.debugfs_managed(33) is False
    # debugfs wins over the record and the driver rule
    entries = [{'irq': 33, 'name': 'nvme0q1', 'status': 'changed', 'before': '0', 'after': '1', 'msg': None}]
    assert irq.predict_managed(entries, {'nvme0q1': True}) == []
    assert (entries[0]['status'], entries[0]['managed_source']) == ('changed', 'debugfs')


def test_predict_managed_sources_in_order(guest):
    entries = [{'irq': n, 'name': name, 'status': status, 'before': '0', 'after': '1', 'msg': None}
               for n, name, status in ((31, 'nvme0q0', 'changed'), (33, 'nvme0q1', 'changed'), (34, 'nvme0q2', 'changed'),
                                       (27, 'ahci[0000:00:1f.2]', 'changed'), (35, 'nvme2q0', 'unchanged'))]
    unknown = irq.predict_managed(entries, {'nvme0q1': False, 'nvme0q0': True})
    assert [(e['irq'], e['status'], e['managed_source'], e['managed_unknown']) for e in entries] == [
        (31, 'managed', 'record', False), (33, 'changed', 'record', False), (34, 'managed', 'driver', False),
        (27, 'changed', None, True), (35, 'unchanged', None, False)]
    assert unknown == [27] and entries[0]['after'] == '0' and 'refused with EIO or EPERM earlier this boot' in entries[0]['msg']
    assert irq.driver_managed('nvme0q1, nvme0q0') is None and irq.driver_managed('nvme12q3') is True


def test_mark_pending_recorded_lag():
    """fixtures/irq/irqlab_boot1_converged: nvme2q0 (31) smp_affinity_list 1, effective_affinity_list 0."""
    entries = [{'irq': 31, 'status': 'unchanged', 'after': '1', 'effective': '0', 'msg': None},
               {'irq': 32, 'status': 'unchanged', 'after': '0', 'effective': '0', 'msg': None},
               {'irq': 35, 'status': 'changed', 'after': '1', 'effective': '0', 'msg': None},
               {'irq': 36, 'status': 'managed', 'after': '0', 'effective': '1', 'msg': None},
               {'irq': 37, 'status': 'unchanged', 'after': '0-1', 'effective': None, 'msg': None}]
    assert irq.mark_pending(entries) == [31, 35]
    assert irq.mark_pending(entries, ('unchanged',)) == [31] and not entries[2]['pending']
    assert entries[0]['msg'].startswith('move pending: the kernel still delivers it to CPU(s) 0')


def test_host_script_records_managed_irqs(guest, host_script, tmp_path, capsys):
    """The boot-time script records what the kernel answered, with this boot's id; a second run leaves it."""
    for number, dummy, dummy2, code in recorded_writes():
        if code:
            guest.fail_writes(AFF % number, code)
    os.makedirs(guest.path('/proc/sys/kernel/random'))
    with open(guest.path(irq.BOOT_ID), 'w') as handle:
        handle.write(BOOT2 + '\n')
    path = rules_file(tmp_path, [{'selector': r'^nvme0q\d+$', 'policy': 'cpus', 'cpus': '0'}])
    assert host_script.main(['inferops-irq-pin.py', 'apply', path]) == 0
    record = guest.path(irq.RECORD)
    assert json.loads(open(record).read()) == {'version': 1, 'boot_id': BOOT2, 'managed': ['nvme0q2'], 'writable': ['nvme0q0']}
    before = os.stat(record).st_ino
    assert host_script.main(['inferops-irq-pin.py', 'apply', path]) == 0
    assert os.stat(record).st_ino == before
    assert irq.load_record(open(record).read(), BOOT2) == {'nvme0q2': True, 'nvme0q0': False}


# ---------------------------------------------------------------- irqbalance's environment file

def test_irqbalance_env_stock_file_sets_nothing():
    """The stock Debian file (recorded on lab guest irqrec) has every assignment commented out."""
    files = json.loads(fixture('info', 'fresh/snapshot.json'))['files']
    env = irq.parse_irqbalance_env(files['/etc/default/irqbalance'])
    assert env == {'variables': {}, 'args': [], 'policyscript': None, 'banned_cpus': None}


def test_irqbalance_env_role_file():
    files = json.loads(fixture('info', 'converged/snapshot.json'))['files']
    env = irq.parse_irqbalance_env(files['/etc/default/irqbalance'])
    assert env['policyscript'] == '/usr/local/sbin/inferops-irq-pin' and env['banned_cpus'] is None


@pytest.mark.parametrize('text, banned, policyscript', [
    ('IRQBALANCE_BANNED_CPULIST=32-63\n', '32-63', None),
    ("IRQBALANCE_BANNED_CPUS='0000000f'\n", '0-3', None),
    ('IRQBALANCE_BANNED_CPULIST=0-15:2/4\nIRQBALANCE_BANNED_CPUS=ff\n', '0-1,4-5,8-9,12-13', None),
    ('IRQBALANCE_ARGS="-l /usr/local/bin/p --powerthresh=off"\n', None, '/usr/local/bin/p'),
    ('IRQBALANCE_BANNED_CPULIST=junk\n', None, None),
])
def test_irqbalance_env(text, banned, policyscript):
    env = irq.parse_irqbalance_env(text)
    assert env['banned_cpus'] == banned and env['policyscript'] == policyscript


def test_managed_status_order(guest, monkeypatch):
    """debugfs, then the record of this boot, then the NVMe driver rule; None when none knows."""
    assert irq.managed_status(33, 'nvme0q1', {}) == (True, 'driver')
    assert irq.managed_status(31, 'nvme0q0', {}) == (None, None)
    assert irq.managed_status(31, 'nvme0q0', {'nvme0q0': False}) == (False, 'record')
    monkeypatch.setattr(irq, 'debugfs_managed', lambda number: True)
    assert irq.managed_status(31, 'nvme0q0', {'nvme0q0': False}) == (True, 'debugfs')


@pytest.mark.parametrize('args, expected', [
    (None, []),
    ([], []),
    (['--powerthresh=off', '-d'], []),
    ('--oneshot', ['x = "--oneshot": must be a list of options like --powerthresh=off']),
    (['--banscript=$(reboot)'], ['x = ["--banscript=$(reboot)"]: must be a list of options like --powerthresh=off']),
    (['--policyscript=/bin/true'], ['x = ["--policyscript=/bin/true"]: --policyscript is set by the role']),
    (['-l'], ['x = ["-l"]: --policyscript is set by the role']),
])
def test_irqbalance_args_errors(args, expected):
    assert irq.irqbalance_args_errors(args, name='x') == expected


@pytest.mark.parametrize('actual, effective, target, expected', [
    ('0-3', '2', '0,1,2,3', 'right'),
    ('4', None, '4', 'right'),
    ('4', '', '4', 'right'),
    ('4', '7', '4', 'pending'),
    ('4', 'garbage', '4', 'right'),
    ('5', '4', '4', 'wrong'),
    (None, '4', '4', 'wrong'),
    ('garbage', '4', '4', 'wrong'),
])
def test_pin_state(actual, effective, target, expected):
    assert irq.pin_state(actual, effective, target) == expected
