# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""nvme_connect replayed on sysfs trees and nvme-cli output recorded on the nvmeof_pool lab.

Fixtures: tests/unit/fixtures/nvme/nvmeof (see its README.md). The initiator is compute1
(host NQN ...uuid:7e16d9e1-...), the target 10.77.0.10 exports nqn.2026-09.internal.ai:lab-pool
(two namespaces) over tcp and rdma port 4420.
"""

from __future__ import annotations

import functools
import importlib.machinery
import importlib.util
import json
import os
import shutil
import stat
import subprocess
import sys
import uuid

import pytest

from ansible.module_utils.common.warnings import get_warning_messages

from ansible_collections.inferops.node.plugins.module_utils.storage import nvme_common
from ansible_collections.inferops.node.plugins.module_utils.fabric import nvme_fabrics
from ansible_collections.inferops.node.plugins.modules import nvme_connect
from ansible_collections.inferops.node.tests.unit import host_package, module_harness

SUB = 'nqn.2026-09.internal.ai:lab-pool'
HOSTNQN = 'nqn.2014-08.org.nvmexpress:uuid:7e16d9e1-e671-4eb7-a92e-1455d7efcbff'
HOSTID = '7e16d9e1-e671-4eb7-a92e-1455d7efcbff'
STRANGER = 'nqn.2014-08.org.nvmexpress:uuid:0badc0de-0000-4000-8000-000000000001'
TCP = {'transport': 'tcp', 'traddr': '10.77.0.10', 'subnqn': SUB}
RDMA = {'transport': 'rdma', 'traddr': '10.77.0.10', 'subnqn': SUB}
LAB = {'nr_io_queues': 2, 'queue_size': 128, 'ctrl_loss_tmo': 120, 'reconnect_delay': 2}
# A valid DH-HMAC-CHAP secret, printed by `nvme gen-dhchap-key` on compute1.
SECRET = 'DHHC-1:00:Dr1pVHGMP7LGDIkHR0b0ucS0hPb4hen8HssCMPmjcP3SazVy:'


NVMEOF = os.path.join('nvme', 'nvmeof')
fixture = functools.partial(module_harness.fixture, NVMEOF)
run_module = functools.partial(module_harness.run_module, nvme_connect.main)


class Host(module_harness.FakeHost):
    """compute1 as recorded: a sysfs snapshot under a temporary root plus a table of commands."""

    fixtures = NVMEOF

    def __init__(self, tmp_path, monkeypatch, snapshot):
        super(Host, self).__init__(tmp_path, monkeypatch, snapshot)
        self.sleeps = []
        monkeypatch.setattr(nvme_connect.time, 'sleep', self.sleeps.append)

    def load(self, snapshot):
        """A new snapshot keeps what the module wrote below /etc, /run and /usr, and the host identity."""
        keep = {}
        for path in ('etc', 'run', 'usr'):
            if os.path.isdir(os.path.join(self.root, path)):
                keep[path] = os.path.join(self.root + '.keep', path)
                shutil.copytree(os.path.join(self.root, path), keep[path], symlinks=True)
        super(Host, self).load(snapshot)
        for path, saved in keep.items():
            shutil.copytree(saved, os.path.join(self.root, path), symlinks=True, dirs_exist_ok=True)
        if keep:
            shutil.rmtree(self.root + '.keep')
        self.write('/etc/nvme/hostnqn', HOSTNQN + '\n')
        self.write('/etc/nvme/hostid', HOSTID + '\n')
        os.makedirs(self.path('/run/systemd/system'), exist_ok=True)

    def write(self, target, content):
        os.makedirs(os.path.dirname(self.path(target)), exist_ok=True)
        with open(self.path(target), 'w') as handle:
            handle.write(content)

    def remove_controller(self, name):
        """What the kernel does on delete_controller: the controller leaves sysfs."""
        real = os.path.realpath(self.path('/sys/class/nvme/%s' % name))
        shutil.rmtree(real)
        os.unlink(self.path('/sys/class/nvme/%s' % name))
        for subsys in os.listdir(self.path('/sys/class/nvme-subsystem')):
            link = self.path('/sys/class/nvme-subsystem/%s/%s' % (subsys, name))
            if os.path.lexists(link):
                os.unlink(link)


def portal(transport):
    return ['nvme', 'discover', '--transport=%s' % transport, '--traddr=10.77.0.10', '--trsvcid=4420',
            '--hostnqn=%s' % HOSTNQN, '--hostid=%s' % HOSTID, '--output-format=json']


def connect_argv(transport, extra=()):
    return (['nvme', 'connect', '--transport=%s' % transport, '--traddr=10.77.0.10', '--trsvcid=4420',
             '--hostnqn=%s' % HOSTNQN, '--hostid=%s' % HOSTID, '--nqn=%s' % SUB] + list(extra) + ['--output-format=json'])


LAB_ARGS = ['--nr-io-queues=2', '--queue-size=128', '--ctrl-loss-tmo=120', '--reconnect-delay=2']


def lab_tree(host, snapshot_lab_settings=True):
    """The recorded tcp_live tree had the kernel defaults for two settings; the lab uses 120/2."""
    if snapshot_lab_settings:
        for ctrl in os.listdir(host.path('/sys/class/nvme')):
            base = '/sys/class/nvme/%s' % ctrl
            host.write(base + '/ctrl_loss_tmo', '120\n')
            host.write(base + '/reconnect_delay', '2\n')


# ------------------------------------------------------------------ module_utils

def test_parse_address_and_ctrl_loss_rounding():
    assert nvme_fabrics.parse_address('traddr=10.77.0.10,trsvcid=4420,src_addr=10.77.0.21') == {
        'traddr': '10.77.0.10', 'trsvcid': '4420', 'src_addr': '10.77.0.21'}
    assert nvme_fabrics.parse_address(None) == {}
    # The kernel keeps ceil(tmo / delay) attempts: seen on compute1 (60 s / 2 s, then delay 3 -> 90).
    assert nvme_fabrics.expected_ctrl_loss_tmo(60, 2) == 60
    assert nvme_fabrics.expected_ctrl_loss_tmo(61, 2) == 62
    assert nvme_fabrics.expected_ctrl_loss_tmo(-1, 2) == -1
    assert nvme_fabrics.expected_ctrl_loss_tmo(600, 10) == 600


@pytest.mark.parametrize('record, expected', [
    ('discover_tcp.json', [('current discovery subsystem', nvme_common.DISCOVERY_NQN, 'tcp'), ('nvme subsystem', SUB, 'tcp')]),
    ('discover_rdma.json', [('current discovery subsystem', nvme_common.DISCOVERY_NQN, 'rdma'), ('nvme subsystem', SUB, 'rdma')]),
    ('discover_stranger.json', [('current discovery subsystem', nvme_common.DISCOVERY_NQN, 'tcp')]),
])
def test_parse_discovery(record, expected):
    records = nvme_fabrics.parse_discovery(fixture(record))
    assert [(r['subtype'], r['subnqn'], r['trtype']) for r in records] == expected
    assert all(r['traddr'] == '10.77.0.10' and r['trsvcid'] == '4420' and r['portid'] in (1, 2) for r in records)


def test_controllers_and_subsystems_from_two_paths(tmp_path, monkeypatch):
    Host(tmp_path, monkeypatch, 'sysfs_two_paths.json')
    ctrls = nvme_fabrics.controllers()
    assert [(c['name'], c['transport'], c['state'], c['io_queues'], c['queue_size'], c['subsystem']) for c in ctrls] == [
        ('nvme0', 'tcp', 'live', 2, 128, 'nvme-subsys0'), ('nvme1', 'rdma', 'live', 2, 128, 'nvme-subsys0')]
    assert ctrls[0]['addr'] == {'traddr': '10.77.0.10', 'trsvcid': '4420', 'src_addr': '10.77.0.21'}
    assert ctrls[1]['addr'] == {'traddr': '10.77.0.10', 'trsvcid': '4420'}
    assert ctrls[0]['hostnqn'] == HOSTNQN and ctrls[0]['hostid'] == HOSTID
    assert (ctrls[0]['ctrl_loss_tmo'], ctrls[0]['reconnect_delay'], ctrls[0]['keep_alive_tmo']) == (120, 2, 5)
    assert [p['name'] for p in ctrls[1]['paths']] == ['nvme0c1n1', 'nvme0c1n2']
    subsys = nvme_fabrics.subsystems(ctrls)['nvme-subsys0']
    assert subsys['nqn'] == SUB and subsys['controllers'] == ['nvme0', 'nvme1']
    assert [(n['device'], n['nsid'], n['size_bytes'], n['exists']) for n in subsys['namespaces']] == [
        ('/dev/nvme0n1', 1, 2147483648, True), ('/dev/nvme0n2', 2, 67108864, True)]
    assert subsys['namespaces'][0]['wwid'].startswith('uuid.')
    assert nvme_fabrics.online_cpus() == 2
    assert nvme_fabrics.subsystem_controllers() == {'nvme-subsys0': ['nvme0', 'nvme1']}
    # a multipath head's transport is its subsystem's first controller's (test_blockdev: a path's is its own)
    assert [nvme_fabrics.namespace_transport(k) for k in ('nvme0n1', 'nvme0n2')] == ['tcp', 'tcp']


def test_device_in_use_reads_mountinfo(tmp_path, monkeypatch):
    Host(tmp_path, monkeypatch, 'sysfs_tcp_live.json')
    assert nvme_fabrics.device_in_use('nvme0n1') == ['mounted on /srv/models']
    assert nvme_fabrics.device_in_use('nvme0n2') == []


@pytest.mark.parametrize('value, message', [
    ('nqn.2026-09.internal.ai:models-pool-01', None),
    ('nqn.2014-08.org.nvmexpress:uuid:7e16d9e1-e671-4eb7-a92e-1455d7efcbff', None),
    ('nqn.2026-13.internal.ai:pool', 'is not an NQN'),
    ('nqn.26-09.internal.ai:pool', 'is not an NQN'),
    ('iqn.2026-09.internal.ai:pool', 'is not an NQN'),
    ('nqn.2026-09.internal.ai', 'is not an NQN'),
    ('nqn.2026-09.internal.ai:pool 01', 'whitespace'),
    ('nqn.2026-09.internal.ai:a/b', 'slash'),
    ('nqn.2026-09.internal.ai:' + 'x' * 210, 'longer than 223 bytes'),
    ('nqn.2014-08.org.nvmexpress.discovery', 'the discovery NQN'),
    ('nqn.2014-08.org.nvmexpress:uuid:not-a-uuid-at-all-no-not-a-uuid-1234', 'not a UUID'),
])
def test_nqn_syntax(value, message):
    if message is None:
        assert nvme_common.check_nqn(value, 'subnqn') == value
    else:
        with pytest.raises(nvme_common.NvmeInputError, match=message):
            nvme_common.check_nqn(value, 'subnqn')


@pytest.mark.parametrize('netaddr_present', [True, False])
@pytest.mark.parametrize('transport, value, result', [
    ('tcp', '10.77.0.10', '10.77.0.10'),
    ('rdma', 'fe80:0:0::1', 'fe80::1'),
    ('tcp', '10.77.0.300', None),
    ('tcp', '10.77.0', None),
    ('tcp', '0.0.0.0', None),
    ('rdma', 'target1', None),
    ('fc', 'nn-0x20000090fa94845f:pn-0x10000090fa94845f', 'nn-0x20000090fa94845f:pn-0x10000090fa94845f'),
    ('fc', '10.77.0.10', None),
])
def test_traddr_validation_with_and_without_netaddr(monkeypatch, netaddr_present, transport, value, result):
    if netaddr_present and not nvme_common.HAS_NETADDR:
        pytest.skip('netaddr is not installed')
    monkeypatch.setattr(nvme_common, 'HAS_NETADDR', netaddr_present)
    if result is None:
        with pytest.raises(nvme_common.NvmeInputError, match='traddr'):
            nvme_common.check_traddr(transport, value, 'traddr')
    else:
        assert nvme_common.check_traddr(transport, value, 'traddr') == result


def test_dhchap_secret_checks_the_crc():
    assert nvme_common.check_dhchap_secret(SECRET, 's') == SECRET
    broken = SECRET[:12] + ('A' if SECRET[12] != 'A' else 'B') + SECRET[13:]
    with pytest.raises(nvme_common.NvmeInputError, match='CRC-32') as err:
        nvme_common.check_dhchap_secret(broken, 's')
    assert broken not in str(err.value)
    for bad in ('secret', 'DHHC-1:04:abcd:', 'DHHC-1:00:bm90LWEta2V5:'):
        with pytest.raises(nvme_common.NvmeInputError):
            nvme_common.check_dhchap_secret(bad, 's')


ROLE_FILES = os.path.join(os.path.dirname(__file__), '..', '..', '..', '..', 'roles', 'nvmeof_initiator', 'files')


def role_file(name):
    with open(os.path.join(ROLE_FILES, name)) as handle:
        return handle.read()


def load_helper():
    """The boot helper of the role, importing the collection's module_utils (as on the host, its copies)."""
    path = os.path.join(ROLE_FILES, 'inferops_nvmf_connect.py')
    loader = importlib.machinery.SourceFileLoader('inferops_nvmf_connect', path)
    spec = importlib.util.spec_from_loader('inferops_nvmf_connect', loader)
    helper = importlib.util.module_from_spec(spec)
    loader.exec_module(helper)
    return helper


def test_helper_and_unit_files_of_the_role():
    """The boot helper (files of the nvmeof_initiator role: a POSIX sh wrapper and the Python code it runs) reads
    the settings file the module writes; the unit runs it, ordered for _netdev mounts."""
    wrapper, unit_text = role_file('inferops-nvmf-connect'), role_file('inferops-nvmf-connect@.service')
    sh = shutil.which('sh')
    if sh:
        proc = subprocess.run([sh, '-n'], input=wrapper, universal_newlines=True, check=False)
        assert proc.returncode == 0
    assert 'exec /usr/bin/python3 -ES /usr/local/lib/inferops-nvmf-connect.pyz "$@"' in wrapper
    helper = load_helper()
    assert helper.CONF_DIR == nvme_connect.CONF_DIR
    conf = helper.read_conf(module_harness.fixture_path(NVMEOF, 'connect_unit_rdma.conf'))
    for key in ('NVMF_TRANSPORT', 'NVMF_TRADDR', 'NVMF_TRSVCID', 'NVMF_SUBNQN', 'NVMF_HOSTNQN', 'NVMF_HOST_IFACE',
                'NVMF_HOST_TRADDR', 'NVMF_CONNECT_ARGS', 'NVMF_RETRY_DELAY', 'NVMF_ATTEMPTS'):
        assert '%s=' % key in fixture('connect_unit_rdma.conf') and key in helper.KEYS and key in conf
    assert conf['NVMF_HOST_IFACE'] == '' and conf['NVMF_ATTEMPTS'] == '120'
    assert conf['NVMF_CONNECT_ARGS'].split() == connect_argv('rdma', LAB_ARGS)[2:-1]
    assert 'ExecStart=%s %%i' % nvme_connect.HELPER in unit_text
    assert 'ConditionPathExists=%s/%%i.conf' % nvme_connect.CONF_DIR in unit_text
    assert 'Before=remote-fs-pre.target' in unit_text
    assert 'After=network-online.target' in unit_text


def test_boot_helper_runs_from_its_package_without_ansible(tmp_path):
    """The zip application the role installs, run as the wrapper runs it (python3 -ES: no site packages, no
    Ansible): it imports the package inside it and, without a NAME, says how to use it (exit status 2)."""
    package = host_package.write_package('nvmeof_initiator', 'inferops_nvmf_connect.py', tmp_path)
    proc = subprocess.run([sys.executable, '-ES', str(package)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, check=False, env={'LC_ALL': 'C', 'PATH': '/usr/bin:/bin'})
    assert proc.returncode == 2 and 'Traceback' not in proc.stderr, proc.stderr
    assert proc.stderr == 'usage: inferops-nvmf-connect <name>\n'


# ------------------------------------------------------------------ the boot helper on recorded trees

class Boot(object):
    """The boot helper run on a recorded tree with compute1's rdma settings file (as the module wrote it):
    ``connect_to`` is the tree a connect attempt leaves (None: the attempt fails)."""

    def __init__(self, host, monkeypatch, connect_to=None, conf=None):
        self.host = host
        self.helper = load_helper()
        self.connect_to = connect_to
        self.calls = []
        self.sleeps = []
        conf_dir = host.tmp / 'conf'
        conf_dir.mkdir(exist_ok=True)
        (conf_dir / 'lab-pool-rdma.conf').write_text(conf or fixture('connect_unit_rdma.conf'))
        monkeypatch.setattr(self.helper, 'CONF_DIR', str(conf_dir))

    def run(self, argv):
        self.calls.append(argv)
        if argv[0] == 'timeout' and self.connect_to:
            self.host.load(self.connect_to)
            return 0
        return 0 if argv[0] == '/sbin/modprobe' else 1

    def __call__(self, name='lab-pool-rdma'):
        return self.helper.connect(name, runner=self.run, sleep=self.sleeps.append)


MODPROBE = ['/sbin/modprobe', '-a', 'nvme-fabrics', 'nvme-rdma']
BOOT_CONNECT = ['timeout', '--kill-after=10', '60', '/usr/sbin/nvme', 'connect'] + connect_argv('rdma', LAB_ARGS)[2:-1]


@pytest.mark.parametrize('snapshot, ctrl, state', [
    ('sysfs_rdma_live.json', 'nvme0', 'live'),
    # the kernel retries a connecting controller by itself (ctrl_loss_tmo): no second one
    ('sysfs_rdma_connecting.json', 'nvme1', 'connecting'),
])
def test_boot_helper_leaves_a_present_controller(tmp_path, monkeypatch, capsys, snapshot, ctrl, state):
    boot = Boot(Host(tmp_path, monkeypatch, snapshot), monkeypatch)
    assert boot() == 0
    assert boot.calls == [MODPROBE] and boot.sleeps == []
    assert capsys.readouterr().out == '%s: %s via rdma 10.77.0.10 4420 is %s\n' % (ctrl, SUB, state)


@pytest.mark.parametrize('snapshot', ['sysfs_empty.json', 'sysfs_tcp_live.json', 'deleting'])
def test_boot_helper_connects_an_absent_controller(tmp_path, monkeypatch, capsys, snapshot):
    """No controller, only the tcp path's, or the rdma one being deleted: one bounded connect, then sysfs says live."""
    host = Host(tmp_path, monkeypatch, 'sysfs_rdma_live.json' if snapshot == 'deleting' else snapshot)
    if snapshot == 'deleting':
        host.write('/sys/class/nvme/nvme0/state', 'deleting\n')
    boot = Boot(host, monkeypatch, connect_to='sysfs_rdma_live.json')
    assert boot() == 0
    assert boot.calls == [MODPROBE, BOOT_CONNECT] and boot.sleeps == []
    assert capsys.readouterr().out == 'nvme0: %s via rdma 10.77.0.10 4420 is live\n' % SUB


def test_boot_helper_gives_up_after_its_attempts_without_printing_the_secret(tmp_path, monkeypatch, capsys):
    conf = fixture('connect_unit_rdma.conf').replace('NVMF_ATTEMPTS=120', 'NVMF_ATTEMPTS=3').replace(
        "--reconnect-delay=2'", "--reconnect-delay=2 --dhchap-secret=%s'" % SECRET)
    boot = Boot(Host(tmp_path, monkeypatch, 'sysfs_empty.json'), monkeypatch, conf=conf)
    assert boot() == 1
    assert boot.calls == [MODPROBE] + [BOOT_CONNECT + ['--dhchap-secret=%s' % SECRET]] * 3
    assert boot.sleeps == [5, 5]
    out, err = capsys.readouterr()
    assert out == '' and err.splitlines() == [
        'lab-pool-rdma: attempt 1/3 failed; retrying in 5 s', 'lab-pool-rdma: attempt 2/3 failed; retrying in 5 s',
        'lab-pool-rdma: rdma 10.77.0.10 4420: not connected after 3 attempts']
    assert SECRET not in out + err


def test_boot_helper_refuses_a_missing_or_incomplete_settings_file(tmp_path, monkeypatch, capsys):
    boot = Boot(Host(tmp_path, monkeypatch, 'sysfs_empty.json'), monkeypatch,
                conf=fixture('connect_unit_rdma.conf').replace('NVMF_ATTEMPTS=120\n', ''))
    assert boot('other') == 1
    assert capsys.readouterr().err == '%s/other.conf: not found\n' % boot.helper.CONF_DIR
    assert boot() == 1
    assert capsys.readouterr().err == '%s/lab-pool-rdma.conf: NVMF_ATTEMPTS not set\n' % boot.helper.CONF_DIR
    assert boot.calls == []
    assert boot.helper.main(['inferops-nvmf-connect']) == 2


def test_boot_helper_runs_commands_in_the_c_locale(monkeypatch):
    helper = load_helper()
    seen = []
    monkeypatch.setattr(helper.subprocess, 'call', lambda argv, env: seen.append((argv, env)) or 3)
    assert helper.run(['/sbin/modprobe', '-a', 'nvme-fabrics']) == 3
    assert seen[0][0] == ['/sbin/modprobe', '-a', 'nvme-fabrics']
    assert all(seen[0][1][key] == 'C' for key in ('LANG', 'LC_ALL', 'LC_MESSAGES'))


# ------------------------------------------------------------------ idempotence from sysfs

def test_live_connection_is_unchanged_and_reported(tmp_path, monkeypatch):
    host = Host(tmp_path, monkeypatch, 'sysfs_tcp_live.json')
    lab_tree(host)
    failed, result = run_module({'connections': [dict(TCP, **LAB)]})
    assert not failed, result
    assert not result['changed']
    conn = result['connections'][0]
    assert conn['action'] == 'unchanged' and conn['name'] == 'lab-pool-tcp-10.77.0.10-4420'
    assert [(c['name'], c['state'], c['transport'], c['io_queues'], c['queue_size']) for c in conn['controllers']] == [
        ('nvme0', 'live', 'tcp', 2, 128)]
    assert conn['controllers'][0]['src_addr'] == '10.77.0.21'
    assert [d['device'] for d in conn['devices']] == ['/dev/nvme0n1', '/dev/nvme0n2']
    assert conn['subsystem']['name'] == 'nvme-subsys0'
    assert conn['mismatches'] == [] and conn['unit'] is None
    assert host.calls == []  # idempotence comes from sysfs alone


def test_ctrl_loss_tmo_and_reconnect_delay_change_in_place(tmp_path, monkeypatch):
    host = Host(tmp_path, monkeypatch, 'sysfs_tcp_live.json')
    lab_tree(host)
    failed, result = run_module({'connections': [dict(TCP, nr_io_queues=2, queue_size=128, ctrl_loss_tmo=600, reconnect_delay=5)]},
                                diff=True)
    assert not failed, result
    assert result['changed'] and result['connections'][0]['action'] == 'updated'
    # The connection lines stay the same: the settings written in place are the diff.
    assert result['diff'][0]['before'] == result['diff'][0]['after']
    assert result['diff'][1] == {
        'before_header': 'NVMe-oF controller settings', 'after_header': 'NVMe-oF controller settings',
        'before': 'nvme0 reconnect_delay=2\nnvme0 ctrl_loss_tmo=120\n',  # lab_tree's
        'after': 'nvme0 reconnect_delay=5\nnvme0 ctrl_loss_tmo=600\n'}
    assert host.read('/sys/class/nvme/nvme0/reconnect_delay') == '5'
    assert host.read('/sys/class/nvme/nvme0/ctrl_loss_tmo') == '600'
    assert host.calls == []


def test_queue_mismatch_is_reported_not_reconnected(tmp_path, monkeypatch):
    host = Host(tmp_path, monkeypatch, 'sysfs_tcp_live.json')
    lab_tree(host)
    failed, result = run_module({'connections': [dict(TCP, nr_io_queues=2, queue_size=256, keep_alive_tmo=15)]})
    assert not failed, result
    assert not result['changed']
    assert result['connections'][0]['mismatches'] == [
        'nvme0 queue_size: live 128, wanted 256', 'nvme0 keep_alive_tmo: live 5, wanted 15']
    assert any('reconnect_on_change=true' in w for w in get_warning_messages())
    assert host.calls == []


def test_reconnect_on_change_refuses_the_last_path_of_a_mounted_namespace(tmp_path, monkeypatch):
    host = Host(tmp_path, monkeypatch, 'sysfs_tcp_live.json')
    failed, result = run_module({'connections': [dict(TCP, queue_size=256)], 'reconnect_on_change': True})
    assert failed
    assert 'refusing to reconnect nvme0, the last path to nvme-subsys0' in result['msg']
    assert '/dev/nvme0n1 mounted on /srv/models' in result['msg']
    assert host.calls == []


# ------------------------------------------------------------------ connect / disconnect

def test_connect_discovers_first_then_waits_for_the_namespaces(tmp_path, monkeypatch):
    host = Host(tmp_path, monkeypatch, 'sysfs_empty.json')
    host.on(portal('tcp'), out='@discover_tcp.json')
    host.on(connect_argv('tcp', LAB_ARGS), out='@connect_tcp.json', then='sysfs_tcp_new.json')
    failed, result = run_module({'connections': [dict(TCP, **LAB)]})
    assert not failed, result
    assert result['changed']
    conn = result['connections'][0]
    assert conn['action'] == 'connected'
    assert [r['subnqn'] for r in conn['discovery']] == [nvme_common.DISCOVERY_NQN, SUB]
    assert [(c['name'], c['state'], c['io_queues'], c['queue_size'], c['ctrl_loss_tmo']) for c in conn['controllers']] == [
        ('nvme0', 'live', 2, 128, 120)]
    assert [d['device'] for d in conn['devices']] == ['/dev/nvme0n1', '/dev/nvme0n2']
    assert host.calls == [portal('tcp'), connect_argv('tcp', LAB_ARGS)]


def test_check_mode_connects_nothing(tmp_path, monkeypatch):
    host = Host(tmp_path, monkeypatch, 'sysfs_empty.json')
    failed, result = run_module({'connections': [dict(TCP, **LAB)]}, check_mode=True, diff=True)
    assert not failed, result
    assert result['changed'] and result['connections'][0]['action'] == 'connected'
    assert result['connections'][0]['controllers'] == []
    assert host.calls == []
    assert '(new) tcp traddr=10.77.0.10,trsvcid=4420 %s live' % SUB in result['diff'][0]['after']


def test_unreachable_target_fails_after_bounded_retries_naming_the_address(tmp_path, monkeypatch):
    host = Host(tmp_path, monkeypatch, 'sysfs_empty.json')
    host.on(portal('tcp'), rc=1, err='@discover_unreachable.json.stderr')
    failed, result = run_module({'connections': [TCP], 'retries': 3, 'retry_delay': 2})
    assert failed
    assert result['msg'].startswith('connections[0]: target tcp 10.77.0.10:4420 (subsystem %s) unreachable: '
                                    'discovery failed after 3 attempts' % SUB)
    assert 'Connection timed out' in result['msg']
    assert host.calls == [portal('tcp')] * 3 and host.sleeps == [2, 2]


def test_host_not_allowed_is_refused_before_connecting(tmp_path, monkeypatch):
    host = Host(tmp_path, monkeypatch, 'sysfs_empty.json')
    stranger = ['nvme', 'discover', '--transport=tcp', '--traddr=10.77.0.10', '--trsvcid=4420',
                '--hostnqn=%s' % STRANGER, '--hostid=0badc0de-0000-4000-8000-000000000001', '--output-format=json']
    host.on(stranger, out='@discover_stranger.json')
    failed, result = run_module({'connections': [dict(TCP, hostnqn=STRANGER)]})
    assert failed
    assert ('target tcp 10.77.0.10:4420 does not offer subsystem %s to host %s (its discovery log lists: nothing)'
            % (SUB, STRANGER)) in result['msg']
    assert host.calls == [stranger]


def test_connect_refused_by_the_target(tmp_path, monkeypatch):
    """Listed in the discovery log but the connect is refused: nvme-cli's message, after the retries."""
    host = Host(tmp_path, monkeypatch, 'sysfs_empty.json')
    host.on(portal('tcp'), out='@discover_tcp.json')
    host.on(connect_argv('tcp'), rc=1, err='@connect_stranger.json.stderr')
    failed, result = run_module({'connections': [TCP], 'retries': 2, 'retry_delay': 1})
    assert failed
    assert 'connecting to tcp 10.77.0.10:4420 (subsystem %s, host %s) failed after 2 attempts' % (SUB, HOSTNQN) in result['msg']
    assert 'Input/output error' in result['msg']


def test_reconnecting_controller_fails_the_run_after_retries(tmp_path, monkeypatch):
    """The rdma port was taken down on target1: nvme1 is connecting; the run fails naming the address."""
    host = Host(tmp_path, monkeypatch, 'sysfs_rdma_connecting.json')
    failed, result = run_module({'connections': [dict(RDMA, **LAB)], 'retries': 2, 'retry_delay': 3})
    assert failed
    assert result['msg'].startswith('connections[0]: target rdma 10.77.0.10:4420 (subsystem %s) unreachable: '
                                    'nvme1 is connecting' % SUB)
    assert 'ctrl_loss_tmo=120 s' in result['msg']
    assert host.sleeps == [3] and host.calls == []


def test_replace_tcp_by_rdma_under_the_mount(tmp_path, monkeypatch):
    """Connect the rdma path first; then the tcp path is no longer the last one and goes."""
    host = Host(tmp_path, monkeypatch, 'sysfs_tcp_live.json')
    lab_tree(host)
    mountinfo = host.read('/proc/self/mountinfo')

    def two_paths():
        host.load('sysfs_two_paths.json')
        host.write('/proc/self/mountinfo', mountinfo)
    host.on(portal('rdma'), out='@discover_rdma.json')
    host.on(connect_argv('rdma', LAB_ARGS), out='@connect_rdma.json', then=two_paths)
    host.on(['nvme', 'disconnect', '--device=nvme0'], out='@disconnect_tcp.txt', then=lambda: host.remove_controller('nvme0'))
    failed, result = run_module({'connections': [dict(RDMA, **LAB), dict(TCP, state='absent')]})
    assert not failed, result
    rdma, tcp = result['connections']
    assert (rdma['action'], tcp['action']) == ('connected', 'disconnected')
    assert [(c['name'], c['transport'], c['state']) for c in rdma['controllers']] == [('nvme1', 'rdma', 'live')]
    assert tcp['controllers'] == [] and tcp['devices'] == []
    assert [c['name'] for c in rdma['subsystem']['controllers']] == ['nvme1']
    assert [c[1] for c in host.calls] == ['discover', 'connect', 'disconnect']


def test_disconnecting_the_last_path_of_a_mounted_namespace_is_refused(tmp_path, monkeypatch):
    host = Host(tmp_path, monkeypatch, 'sysfs_tcp_live.json')
    failed, result = run_module({'connections': [dict(TCP, state='absent')]})
    assert failed
    assert 'refusing to disconnect nvme0, the last path to nvme-subsys0 (/dev/nvme0n1 mounted on /srv/models)' in result['msg']
    host.on(['nvme', 'disconnect', '--device=nvme0'], then=lambda: host.remove_controller('nvme0'))
    failed, result = run_module({'connections': [dict(TCP, state='absent')], 'force': True})
    assert not failed, result
    assert result['changed'] and result['connections'][0]['action'] == 'disconnected'


def test_absent_and_already_gone_is_unchanged(tmp_path, monkeypatch):
    host = Host(tmp_path, monkeypatch, 'sysfs_empty.json')
    failed, result = run_module({'connections': [dict(TCP, state='absent')]})
    assert not failed and not result['changed']
    assert result['connections'][0]['action'] == 'absent'
    assert host.calls == []


# ------------------------------------------------------------------ persistence

def unit(name='lab-pool-tcp-10.77.0.10-4420'):
    return 'inferops-nvmf-connect@%s.service' % name


def show(unit_name, active, enabled):
    return 'Id=%s\nActiveState=%s\nUnitFileState=%s\n' % (unit_name, active, enabled)


def test_persistent_present_writes_one_unit_per_connection(tmp_path, monkeypatch):
    """On compute1 after the RDMA converge: the same settings file, then nothing to do."""
    host = Host(tmp_path, monkeypatch, 'sysfs_rdma_live.json')
    host.write(nvme_connect.UNIT_PATH, role_file('inferops-nvmf-connect@.service'))
    rdma = unit('lab-pool-rdma-10.77.0.10-4420')
    host.on(['systemctl', 'show', '--property=Id,UnitFileState,ActiveState', '--', rdma], out=show(rdma, 'inactive', 'disabled'))
    host.on(['systemctl', 'enable', rdma])
    host.on(['systemctl', 'start', rdma])
    failed, result = run_module({'connections': [dict(RDMA, **LAB)], 'persistent': 'present'})
    assert not failed, result
    assert result['changed'] and result['connections'][0]['action'] == 'unchanged'
    assert result['connections'][0]['unit'] == rdma
    assert result['units'] == [{'name': rdma, 'enabled': True, 'active': True}]
    conf = '/etc/nvme/inferops/lab-pool-rdma-10.77.0.10-4420.conf'
    assert host.read(conf) == fixture('connect_unit_rdma.conf')
    assert stat.S_IMODE(os.stat(host.path(conf)).st_mode) == 0o600
    assert result['files_changed'] == [conf]
    # the unit template and its helper are the role's: the module neither writes nor reloads them
    assert not os.path.exists(host.path(nvme_connect.HELPER))
    assert [c[1] for c in host.ran('systemctl')] == ['show', 'enable', 'start']
    # second run, with the unit state recorded on compute1 (active, enabled): nothing to do
    host.calls[:] = []
    host.table.clear()
    host.on(['systemctl', 'show', '--property=Id,UnitFileState,ActiveState', '--', rdma, unit()], out='@systemctl_show_rdma.txt')
    failed, result = run_module({'connections': [dict(RDMA, **LAB), dict(TCP, state='absent')], 'persistent': 'present'})
    assert not failed and not result['changed'], result
    assert result['files_changed'] == []
    assert result['units'] == [{'name': rdma, 'enabled': True, 'active': True}, {'name': unit(), 'enabled': False, 'active': False}]


def test_persistent_absent_removes_the_record_and_leaves_the_role_files(tmp_path, monkeypatch):
    host = Host(tmp_path, monkeypatch, 'sysfs_empty.json')
    host.write('/etc/nvme/inferops/lab-pool-tcp-10.77.0.10-4420.conf', 'NVMF_TRANSPORT=tcp\n')
    host.write(nvme_connect.HELPER, role_file('inferops-nvmf-connect'))
    host.write(nvme_connect.UNIT_PATH, role_file('inferops-nvmf-connect@.service'))
    host.on(['systemctl', 'show', '--property=Id,UnitFileState,ActiveState', '--', unit()], out=show(unit(), 'active', 'enabled'))
    host.on(['systemctl', 'disable', '--now', unit()])
    failed, result = run_module({'connections': [dict(TCP, state='absent')], 'persistent': 'present'}, diff=True)
    assert not failed, result
    assert result['changed']
    assert result['files_changed'] == ['/etc/nvme/inferops/lab-pool-tcp-10.77.0.10-4420.conf']
    assert result['diff'][1] == {'before_header': result['files_changed'][0], 'after_header': result['files_changed'][0],
                                 'before': 'NVMF_TRANSPORT=tcp\n', 'after': ''}
    assert not os.path.exists(host.path(result['files_changed'][0]))
    assert os.path.exists(host.path(nvme_connect.HELPER)) and os.path.exists(host.path(nvme_connect.UNIT_PATH))
    assert host.ran('systemctl', 'disable', '--now', unit())
    assert result['units'] == [{'name': unit(), 'enabled': False, 'active': False}]


def test_persistent_present_needs_the_role_unit(tmp_path, monkeypatch):
    """Without the role's unit template the boot record would never run: refused before any change."""
    host = Host(tmp_path, monkeypatch, 'sysfs_tcp_live.json')
    lab_tree(host)
    host.on(['systemctl', 'show', '--property=Id,UnitFileState,ActiveState', '--', unit()], out=show(unit(), 'inactive', ''))
    args = {'connections': [dict(TCP, **LAB)], 'persistent': 'present'}
    failed, result = run_module(args)
    assert failed
    assert result['msg'] == ('persistent=present needs the boot unit /etc/systemd/system/inferops-nvmf-connect@.service and '
                             'its helper /usr/local/sbin/inferops-nvmf-connect, which the inferops.node.nvmeof_initiator role '
                             'installs')
    assert host.calls == [] and not os.path.exists(host.path(nvme_connect.CONF_DIR))
    # check mode (the role's copy of the unit did not happen either): a warning, and the plan
    failed, result = run_module(args, check_mode=True)
    assert not failed, result
    assert result['changed'] and result['units'] == [{'name': unit(), 'enabled': True, 'active': True}]
    assert any('which the inferops.node.nvmeof_initiator role installs (check mode: not there yet)' in w
               for w in get_warning_messages())


def test_secrets_are_masked_and_need_kernel_support(tmp_path, monkeypatch):
    host = Host(tmp_path, monkeypatch, 'sysfs_empty.json')
    # Debian 12's kernel: "# CONFIG_NVME_AUTH is not set" (recorded /boot/config-6.1.0-57-amd64)
    failed, result = run_module({'connections': [dict(TCP, auth='dhchap', dhchap_secret=SECRET)]})
    assert failed
    assert 'built without CONFIG_NVME_AUTH' in result['msg'] and SECRET not in json.dumps(result)
    # the same on a kernel with CONFIG_NVME_AUTH=m: check mode, persistent, diff
    release = host.read('/proc/sys/kernel/osrelease').strip()
    host.write('/boot/config-%s' % release, 'CONFIG_NVME_AUTH=m\n')
    host.on(['systemctl', 'show', '--property=Id,UnitFileState,ActiveState', '--', unit()], out=show(unit(), 'inactive', ''))
    failed, result = run_module({'connections': [dict(TCP, auth='dhchap', dhchap_secret=SECRET)], 'persistent': 'present'},
                                check_mode=True, diff=True)
    assert not failed, result
    conf_diff = [d for d in result['diff'] if d['after_header'].endswith('.conf')][0]
    assert '--dhchap-secret=********' in conf_diff['after']
    assert SECRET not in json.dumps(result)
    assert not os.path.exists(host.path('/etc/nvme/inferops'))


# ------------------------------------------------------------------ validation

@pytest.mark.parametrize('conn, message', [
    (dict(TCP, subnqn='nqn.2026-13.internal.ai:lab-pool'), "connections[0].subnqn='nqn.2026-13.internal.ai:lab-pool' is not an NQN"),
    (dict(TCP, traddr='10.77.0.300'), "connections[0].traddr='10.77.0.300' is not an IPv4 or IPv6 address"),
    (dict(TCP, trsvcid=70000), 'connections[0].trsvcid=70000 is out of range (1-65535)'),
    (dict(TCP, trsvcid=0), 'connections[0].trsvcid=0 is out of range (1-65535)'),
    (dict(TCP, transport='udp'), 'transport'),
    (dict(TCP, auth='dhchap'), 'connections[0].auth=dhchap needs connections[0].dhchap_secret (the host secret is missing)'),
    (dict(TCP, dhchap_secret='DHHC-1:00:bm90LWEta2V5:'), 'connections[0].dhchap_secret: the key is 5 bytes'),
    (dict(TCP, queue_size=8), 'connections[0].queue_size=8 is out of range (16-1024)'),
    (dict(TCP, ctrl_loss_tmo=-5), 'connections[0].ctrl_loss_tmo=-5 is out of range'),
    (dict(TCP, host_iface='eth9'), "connections[0].host_iface='eth9': no such network interface"),
    (dict(RDMA, host_iface='enp0s16'), 'only tcp binds to an interface'),
    (dict(TCP, name='../etc'), "connections[0].name='../etc'"),
    (dict(TCP, transport='fc'), 'is not an FC address'),
    (dict(TCP, hostnqn='host-1'), "connections[0].hostnqn='host-1' is not an NQN"),
])
def test_bad_input_fails_before_any_command(tmp_path, monkeypatch, conn, message):
    host = Host(tmp_path, monkeypatch, 'sysfs_tcp_live.json')
    failed, result = run_module({'connections': [conn], 'persistent': 'present'})
    assert failed
    assert message in result['msg']
    assert host.calls == []
    assert not os.path.exists(host.path('/etc/nvme/inferops'))


def test_missing_host_nqn_and_duplicates(tmp_path, monkeypatch):
    host = Host(tmp_path, monkeypatch, 'sysfs_empty.json')
    os.unlink(host.path('/etc/nvme/hostnqn'))
    failed, result = run_module({'connections': [TCP]})
    assert failed and 'hostnqn is not set and /etc/nvme/hostnqn does not exist' in result['msg']
    host.write('/etc/nvme/hostnqn', HOSTNQN + '\n')
    failed, result = run_module({'connections': [TCP, dict(TCP, name='again')]})
    assert failed and 'connections[0] and connections[1] are the same connection' in result['msg']
    # the host ID defaults to the UUID of a uuid host NQN when /etc/nvme/hostid is missing
    os.unlink(host.path('/etc/nvme/hostid'))
    failed, result = run_module({'connections': [TCP]}, check_mode=True)
    assert not failed and result['connections'][0]['hostid'] == HOSTID


PLAIN_NQN = 'nqn.2026-09.internal.ai:compute1'
# what Ansible's to_uuid filter gives the NQN, as the nvmeof_initiator role did before the rule moved to Python
PLAIN_ID = str(uuid.uuid5(uuid.UUID('361E6D51-FAEC-444A-9079-341386DA8E2E'), PLAIN_NQN))


def test_host_id_of_an_nqn_without_uuid_is_the_roles(tmp_path, monkeypatch):
    # one rule with the nvmeof_initiator role (nvme_fabrics.host_identity): no hostid given nor on file and an
    # NQN without a UUID gives the ID derived from the NQN, not a failure
    host = Host(tmp_path, monkeypatch, 'sysfs_empty.json')
    os.unlink(host.path('/etc/nvme/hostid'))
    host.write('/etc/nvme/hostnqn', PLAIN_NQN + '\n')
    failed, result = run_module({'connections': [TCP]}, check_mode=True)
    assert not failed, result
    assert result['connections'][0]['hostid'] == PLAIN_ID
    # a connection's own host NQN gets its own ID, not the one on file (which belongs to /etc/nvme/hostnqn)
    host.write('/etc/nvme/hostid', HOSTID + '\n')
    failed, result = run_module({'connections': [dict(TCP, hostnqn=PLAIN_NQN)]}, check_mode=True)
    assert not failed and result['connections'][0]['hostid'] == PLAIN_ID
    failed, result = run_module({'connections': [TCP]}, check_mode=True)
    assert not failed and result['connections'][0]['hostid'] == HOSTID
    # a host ID file that is not a UUID is still refused, naming the file
    host.write('/etc/nvme/hostid', 'garbage\n')
    failed, result = run_module({'connections': [TCP]}, check_mode=True)
    assert failed and '/etc/nvme/hostid' in result['msg'] and 'not a UUID' in result['msg']


def test_discover_returns_the_log(tmp_path, monkeypatch):
    host = Host(tmp_path, monkeypatch, 'sysfs_tcp_live.json')
    host.on(portal('rdma'), out='@discover_rdma.json')
    failed, result = run_module({'discover': [{'transport': 'rdma', 'traddr': '10.77.0.10'}]}, check_mode=True)
    assert not failed, result
    assert not result['changed']
    [entry] = result['discovery']
    assert entry['trsvcid'] == 4420
    assert [(r['subtype'], r['subnqn'], r['portid']) for r in entry['records']] == [
        ('current discovery subsystem', nvme_common.DISCOVERY_NQN, 2), ('nvme subsystem', SUB, 2)]
    host.table.clear()
    host.on(portal('tcp'), rc=1, err='@discover_refused.json.stderr')
    failed, result = run_module({'discover': [{'transport': 'tcp', 'traddr': '10.77.0.10'}], 'retries': 2, 'retry_delay': 0})
    assert failed and result['msg'] == (
        'discovery at tcp 10.77.0.10:4420 failed after 2 attempts: Failed to write to /dev/nvme-fabrics: Connection refused\n'
        'failed to add controller, error connection refused')


def test_connect_all_exits_zero_on_failure_as_recorded():
    """Why the module does not rely on nvmf-autoconnect (nvme-cli issue 2800), as recorded on compute1."""
    lines = fixture('connect-all_unreachable.txt').splitlines()
    assert 'Failed to write to /dev/nvme-fabrics: Connection timed out' in lines
    assert lines[-1] == 'exit=0'


def test_every_command_runs_in_the_c_locale(tmp_path, monkeypatch):
    """nvme-cli's and systemctl's messages are matched and reported: they must not be translated."""
    host = Host(tmp_path, monkeypatch, 'sysfs_empty.json')
    host.on(portal('tcp'), out='@discover_tcp.json')
    host.on(connect_argv('tcp', LAB_ARGS), out='@connect_tcp.json', then='sysfs_tcp_new.json')
    failed, result = run_module({'connections': [dict(TCP, **LAB)]})
    assert not failed, result
    assert host.calls == [portal('tcp'), connect_argv('tcp', LAB_ARGS)]
    assert host.environ == [module_harness.C_LOCALE] * 2
    assert result['command_log'] == [{'argv': call, 'rc': 0, 'ran': True} for call in host.calls]
