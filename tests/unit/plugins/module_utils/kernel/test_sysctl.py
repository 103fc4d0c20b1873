# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""module_utils/kernel/sysctl.py: merging, paths, the read, validation messages and drift (kernel_tuning's rule)."""

from __future__ import annotations

import pytest

from ansible_collections.inferops.node.plugins.module_utils.kernel import sysctl

THP = sysctl.THP_PATH


def info(parameters, thp='always [madvise] never', set_by=None):
    """What sysctl_info returns, for the keys given."""
    return {'parameters': parameters, 'set_by': set_by or {},
            'transparent_hugepage': {'enabled': sysctl.thp_state(thp), 'defrag': None}}


# Runtime values as sysctl_info reads them (tcp_rmem is tab-separated in the kernel's file).
READ = info({
    'vm.swappiness': '60',
    'vm.dirty_ratio': '20',
    'net.ipv4.tcp_rmem': '4096 131072 6291456',
    'net.ipv4.tcp_congestion_control': 'cubic',
    'net.ipv4.conf.eth0/100.rp_filter': '2',
    'kernel.core_pattern': 'core',
}, set_by={'vm.swappiness': {'file': '/etc/sysctl.d/99-local.conf', 'line': 1, 'value': '60',
                             'ignore_failure': False}})


def layers(group=None, host=None, extra=None, profile=None, nr_hugepages=None):
    return [
        {'name': 'kernel_tuning_profile=local_nvme', 'keyed': True, 'settings': profile or {}},
        {'name': 'kernel_tuning_nr_hugepages', 'keyed': False,
         'settings': {} if nr_hugepages is None else {'vm.nr_hugepages': nr_hugepages}},
        {'name': 'kernel_tuning_sysctl_group', 'keyed': True, 'settings': group or {}},
        {'name': 'kernel_tuning_sysctl_host', 'keyed': True, 'settings': host or {}},
        {'name': 'kernel_tuning_sysctl_extra', 'keyed': True, 'settings': extra or {}},
    ]


def test_merge_later_wins_null_removes_keeps_position():
    entries = sysctl.merge_layers(layers(profile={'vm.swappiness': 1, 'vm.dirty_ratio': 20},
                                         group={'vm.swappiness': 5}, host={'vm.dirty_ratio': None},
                                         nr_hugepages=16))
    assert entries == {
        'vm.swappiness': {'value': 5, 'source': "kernel_tuning_sysctl_group['vm.swappiness']"},
        'vm.nr_hugepages': {'value': 16, 'source': 'kernel_tuning_nr_hugepages'},
    }
    assert list(entries) == ['vm.swappiness', 'vm.nr_hugepages']


def test_merge_skips_settings_that_are_not_mappings():
    assert sysctl.merge_layers([{'name': 'x', 'keyed': True, 'settings': 'vm.swappiness=1'}]) == {}


@pytest.mark.parametrize('key, path', [
    ('vm.swappiness', '/proc/sys/vm/swappiness'),
    ('net.ipv4.conf.eth0/100.rp_filter', '/proc/sys/net/ipv4/conf/eth0.100/rp_filter'),
    ('vm..swappiness', None),
    ('vm.swappiness.', None),
    ('swappiness', None),
    ('vm/../x.y', None),
    ('bad key.x', None),
    (1, None),
])
def test_key_path(key, path):
    assert sysctl.key_path(key) == path


@pytest.mark.parametrize('value, normal', [
    (10, '10'), ('0010', '10'), ('4096\t87380  06291456', '4096 87380 6291456'), (' bbr ', 'bbr'),
    ('-1', '-1'), ('-0', '0'), ('a  b', 'a b'), (True, 'True'), ('', ''),
])
def test_normalize(value, normal):
    assert sysctl.normalize(value) == normal


@pytest.mark.parametrize('key, form', [
    ('vm.swappiness', 'vm.swappiness'),
    ('vm/swappiness', 'vm.swappiness'),
    ('net/ipv4/conf/eth0.100/rp_filter', 'net.ipv4.conf.eth0/100.rp_filter'),
    ('net.ipv4.conf.eth0/100.rp_filter', 'net.ipv4.conf.eth0/100.rp_filter'),
    (' kernel.pid_max ', 'kernel.pid_max'),
])
def test_dotted(key, form):
    assert sysctl.dotted(key) == form


def test_parse_conf():
    text = '# comment\n; comment\n\n vm.swappiness = 1 \n-net/ipv4/tcp_fin_timeout=15\nnot a setting\nvm.swappiness=2\n'
    assert sysctl.parse_conf(text) == [(4, 'vm.swappiness', '1', False), (5, 'net.ipv4.tcp_fin_timeout', '15', True),
                                       (7, 'vm.swappiness', '2', False)]


@pytest.mark.parametrize('text, state', [
    ('always [madvise] never', {'current': 'madvise', 'available': ['always', 'madvise', 'never']}),
    ('always defer defer+madvise [madvise] never',
     {'current': 'madvise', 'available': ['always', 'defer', 'defer+madvise', 'madvise', 'never']}),
    (None, None),
])
def test_thp_state(text, state):
    assert sysctl.thp_state(text) == state


def test_valid_plan():
    result = sysctl.plan(layers(profile={'vm.swappiness': 1, 'net.ipv4.tcp_rmem': '4096 131072 6291456',
                                         'net.ipv4.tcp_congestion_control': 'bbr'},
                                group={'net.ipv4.conf.eth0/100.rp_filter': 2}), READ, 'never')
    assert result['errors'] == []
    assert result['names'] == ['vm.swappiness', 'net.ipv4.tcp_rmem', 'net.ipv4.tcp_congestion_control',
                               'net.ipv4.conf.eth0/100.rp_filter']
    assert result['paths']['net.ipv4.conf.eth0/100.rp_filter'] == '/proc/sys/net/ipv4/conf/eth0.100/rp_filter'
    assert result['want'] == {'vm.swappiness': '1', 'net.ipv4.tcp_rmem': '4096 131072 6291456',
                              'net.ipv4.tcp_congestion_control': 'bbr', 'net.ipv4.conf.eth0/100.rp_filter': '2'}
    assert result['diff'] == [
        {'key': 'vm.swappiness', 'wanted': '1', 'actual': '60', 'set_by': '/etc/sysctl.d/99-local.conf'},
        {'key': 'net.ipv4.tcp_congestion_control', 'wanted': 'bbr', 'actual': 'cubic', 'set_by': None},
        {'key': 'transparent_hugepage/enabled', 'wanted': 'never', 'actual': 'madvise', 'set_by': None},
    ]
    assert result['pending'] == ['vm.swappiness', 'net.ipv4.tcp_congestion_control']
    assert result['thp_current'] == 'madvise'
    assert result['modprobe'] == 'tcp_bbr'


def test_plan_before_reading_counts_everything_unreadable():
    result = sysctl.plan(layers(group={'vm.swappiness': 1}))
    assert result['runtime'] == {}
    assert result['diff'] == [{'key': 'vm.swappiness', 'wanted': '1', 'actual': '<unreadable>', 'set_by': None}]
    assert result['thp_current'] == ''
    assert result['modprobe'] is None


@pytest.mark.parametrize('cc, module', [('cubic', None), ('reno', None), ('bbr', 'tcp_bbr')])
def test_modprobe_only_for_modules(cc, module):
    assert sysctl.plan(layers(group={'net.ipv4.tcp_congestion_control': cc}), READ)['modprobe'] == module


@pytest.mark.parametrize('layer, settings, message', [
    ('group', {'bad key': 1},
     "kernel_tuning_sysctl_group['bad key'] = 1: \"bad key\" is not a sysctl key in dotted form (e.g. vm.swappiness)"),
    ('host', {'vm.no_such_knob': 1},
     "kernel_tuning_sysctl_host['vm.no_such_knob'] = 1: unknown kernel parameter vm.no_such_knob "
     "(no readable /proc/sys/vm/no_such_knob on this host)"),
    ('group', {'vm.swappiness': True},
     "kernel_tuning_sysctl_group['vm.swappiness'] = true: boolean values are refused; write the value the kernel "
     "expects (e.g. 0 or 1)"),
    ('extra', {'vm.swappiness': ' On '},
     "kernel_tuning_sysctl_extra['vm.swappiness'] = \" On \": boolean values are refused; write the value the "
     "kernel expects (e.g. 0 or 1)"),
    ('host', {'vm.swappiness': [1]},
     "kernel_tuning_sysctl_host['vm.swappiness'] = [1]: must be an integer or a string (several numbers: one "
     "string, separated by spaces)"),
    ('host', {'kernel.core_pattern': 'a\nb'},
     "kernel_tuning_sysctl_host['kernel.core_pattern'] = \"a\\nb\": must be a non-empty single line"),
    ('host', {'kernel.core_pattern': '  '},
     "kernel_tuning_sysctl_host['kernel.core_pattern'] = \"  \": must be a non-empty single line"),
    ('extra', {'vm.dirty_ratio': 'high'},
     "kernel_tuning_sysctl_extra['vm.dirty_ratio'] = \"high\": vm.dirty_ratio is numeric on this kernel "
     "(now \"20\"), so the value must be an integer or space-separated integers"),
    ('extra', {'net.ipv4.tcp_rmem': '4096 x 1'},
     "kernel_tuning_sysctl_extra['net.ipv4.tcp_rmem'] = \"4096 x 1\": net.ipv4.tcp_rmem is numeric on this "
     "kernel (now \"4096 131072 6291456\"), so the value must be an integer or space-separated integers"),
    ('group', {'net.ipv4.tcp_congestion_control': 'Bb-r'},
     "kernel_tuning_sysctl_group['net.ipv4.tcp_congestion_control'] = \"Bb-r\": not a congestion control name"),
])
def test_entry_errors_name_variable_value_and_fix(layer, settings, message):
    assert sysctl.plan(layers(**{layer: settings}), READ)['errors'] == [message]


def test_unkeyed_layer_is_named_alone():
    result = sysctl.plan(layers(nr_hugepages='many'), info({'vm.nr_hugepages': '0'}))
    assert result['errors'] == ['kernel_tuning_nr_hugepages = "many": vm.nr_hugepages is numeric on this kernel '
                                '(now "0"), so the value must be an integer or space-separated integers']


def test_every_problem_at_once():
    result = sysctl.plan(layers(group={'vm.swappiness': 'yes'}, extra={'vm.nope': 1}), READ, 'always')
    assert len(result['errors']) == 2


@pytest.mark.parametrize('read, message', [
    (info({}, '[always] madvise'),
     'kernel_tuning_thp = "never": not offered by this kernel (%s: always madvise)' % THP),
    (info({}, None), 'kernel_tuning_thp = "never": not offered by this kernel (%s: missing, THP not built in)' % THP),
])
def test_thp_errors(read, message):
    assert sysctl.plan(layers(), read, 'never')['errors'] == [message]


def test_thp_unmanaged_is_no_drift():
    assert sysctl.plan(layers(), READ, None)['diff'] == []


# The EPYC node of seed 000 (one socket, 64 cores, SMT: 128 CPUs), as /sys/devices/system/cpu/online reads.
EPYC = dict(READ, cpus_online='0-127')


@pytest.mark.parametrize('value, line', [
    ('0-3,64-67', '0-3,64-67'),
    ('3,1,2,0', '0-3'),
    ([0, 1, '64-65'], '0-1,64-65'),
    (None, None),
])
def test_cpu_affinity_is_a_normalised_cpulist(value, line):
    result = sysctl.plan(layers(), EPYC, None, value)
    assert result['errors'] == []
    assert result['cpu_affinity'] == line
    assert result['cpu_affinity_file'] == '/etc/systemd/system.conf.d/50-inferops-cpu-affinity.conf'


@pytest.mark.parametrize('value, message', [
    ('0-3,200', 'kernel_tuning_systemd_cpu_affinity = "0-3,200": CPU(s) 200 not online on this host (online: 0-127)'),
    ('3-1', 'kernel_tuning_systemd_cpu_affinity = "3-1": malformed cpulist \'3-1\': range \'3-1\' is descending'),
    ('', 'kernel_tuning_systemd_cpu_affinity = "": must name at least two CPUs'),
    (0, 'kernel_tuning_systemd_cpu_affinity = 0: must name at least two CPUs: with one, systemd skips units that '
        'need more (irqbalance.service has ConditionCPUs=>1)'),
    (True, 'kernel_tuning_systemd_cpu_affinity = true: CPU list must be a cpulist string or integers, got boolean'),
])
def test_cpu_affinity_errors_name_the_variable_value_and_fix(value, message):
    errors = sysctl.plan(layers(), EPYC, None, value)['errors']
    assert len(errors) == 1 and errors[0].startswith(message), errors


def test_cpu_affinity_before_reading_checks_the_form_only():
    assert sysctl.cpu_affinity_errors('0-200') == []
    assert sysctl.cpu_affinity_errors('x')[0].startswith('kernel_tuning_systemd_cpu_affinity = "x": malformed')
