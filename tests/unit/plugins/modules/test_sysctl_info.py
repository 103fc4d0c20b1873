# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""sysctl_info replayed on lab guest ktrec (fixtures/sysctl): ``fresh`` right after boot, ``converged`` after
the kernel_tuning role ran with a local drop-in that overrides one of its keys (see fixtures/sysctl/README.md)."""

from __future__ import annotations

import pytest

from ansible_collections.inferops.node.plugins.module_utils.kernel import sysctl
from ansible_collections.inferops.node.plugins.modules import sysctl_info
from ansible_collections.inferops.node.tests.unit.module_harness import FakeHost, run_module

ROLE_FILE = '/etc/sysctl.d/90-inferops-kernel-tuning.conf'
LOCAL_FILE = '/etc/sysctl.d/99-zz-local.conf'
PROFILE = ['vm.swappiness', 'vm.dirty_background_ratio', 'vm.dirty_ratio', 'vm.max_map_count', 'fs.file-max',
           'net.core.somaxconn', 'net.core.netdev_max_backlog', 'net.ipv4.tcp_congestion_control',
           'net.ipv4.tcp_tw_reuse', 'net.ipv4.tcp_fin_timeout']


class Guest(FakeHost):
    fixtures = 'sysctl'
    snapshot_file = '%s.json'


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    return Guest(tmp_path, monkeypatch, 'fresh')


@pytest.fixture
def converged(tmp_path, monkeypatch):
    return Guest(tmp_path, monkeypatch, 'converged')


def test_fresh_values_files_thp(fresh):
    failed, result = run_module(sysctl_info.main, {'names': PROFILE + ['vm.no_such_knob', 'net.ipv4.route.flush']})
    assert not failed and result['changed'] is False
    # A read-only module: no command at all (so no locale to get wrong).
    assert fresh.calls == []
    assert result['parameters']['vm.swappiness'] == '60'
    assert result['parameters']['net.ipv4.tcp_congestion_control'] == 'cubic'
    # Unknown, and write-only (route.flush cannot be read), are both unreadable.
    assert result['unreadable'] == ['vm.no_such_knob', 'net.ipv4.route.flush']
    assert result['parameters']['vm.no_such_knob'] is None
    assert result['paths']['fs.file-max'] == '/proc/sys/fs/file-max'
    paths = [f['path'] for f in result['files']]
    # Name order across directories, /etc/sysctl.conf last; README.sysctl is not a .conf file.
    assert paths == sorted(paths[:-1], key=lambda p: p.rsplit('/', 1)[1]) + ['/etc/sysctl.conf']
    assert ROLE_FILE not in paths and not any(p.endswith('README.sysctl') for p in paths)
    assert 'vm.swappiness' not in result['set_by']
    assert result['transparent_hugepage']['enabled'] == {'current': 'always', 'available': ['always', 'madvise', 'never']}
    assert result['transparent_hugepage']['defrag']['current'] == 'madvise'
    assert 'tcp_bbr' not in result['modules']


def test_converged_set_by_and_override(converged):
    failed, result = run_module(sysctl_info.main, {'names': PROFILE})
    assert not failed and converged.calls == []
    by_path = dict((f['path'], f) for f in result['files'])
    assert by_path[ROLE_FILE]['settings']['vm.dirty_ratio'] == '20'
    assert by_path[LOCAL_FILE]['settings'] == {'vm.swappiness': '10', 'net.ipv4.tcp_fin_timeout': '30'}
    # The local file sorts after the role's drop-in: it sets swappiness at boot, and did at runtime.
    assert result['set_by']['vm.swappiness'] == {'file': LOCAL_FILE, 'line': 2, 'value': '10',
                                                 'ignore_failure': False}
    assert result['set_by']['net.ipv4.tcp_fin_timeout']['ignore_failure'] is True
    assert result['set_by']['vm.dirty_ratio']['file'] == ROLE_FILE
    assert result['parameters']['vm.swappiness'] == '10'
    assert result['parameters']['net.ipv4.tcp_congestion_control'] == 'bbr'
    assert result['transparent_hugepage']['enabled']['current'] == 'never'
    assert 'tcp_bbr' in result['modules']


def test_plan_on_the_converged_guest_names_the_overriding_file(converged):
    dummy, result = run_module(sysctl_info.main, {'names': PROFILE})
    layers = [{'name': 'kernel_tuning_profile=local_nvme', 'keyed': True, 'settings': {
        'vm.swappiness': 1, 'vm.dirty_ratio': 20, 'net.ipv4.tcp_congestion_control': 'bbr'}}]
    plan = sysctl.plan(layers, result, 'never')
    assert plan['errors'] == []
    assert plan['diff'] == [{'key': 'vm.swappiness', 'wanted': '1', 'actual': '10', 'set_by': LOCAL_FILE}]
    assert plan['modprobe'] == 'tcp_bbr'


def test_check_mode_is_the_same(converged):
    normal = run_module(sysctl_info.main, {'names': PROFILE})
    assert run_module(sysctl_info.main, {'names': PROFILE}, check_mode=True) == normal


def test_without_names_every_recorded_key(fresh):
    failed, result = run_module(sysctl_info.main, {})
    assert not failed
    assert result['parameters']['vm.swappiness'] == '60'
    assert 'net.ipv4.conf.all.rp_filter' in result['parameters']
    assert result['unreadable'] == []
    assert all(path.startswith('/proc/sys/') for path in result['paths'].values())


def test_bad_names_fail_naming_them(fresh):
    failed, result = run_module(sysctl_info.main, {'names': ['vm.swappiness', 'swappiness', '../etc.passwd']})
    assert failed
    assert result['msg'] == ("names: 'swappiness', '../etc.passwd': not a sysctl key in dotted form "
                             "(e.g. vm.swappiness)")
