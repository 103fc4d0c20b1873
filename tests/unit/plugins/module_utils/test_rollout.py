# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""module_utils/rollout.py: settings, wave plans, failure budget, resumable state."""

from __future__ import annotations

import json

import pytest

from ansible_collections.inferops.node.plugins.module_utils import rollout

BASE = {'inferops_rollout_group': 'local_nvme', 'inferops_rollout_state_file': '/tmp/rollout.json'}


def values(**extra):
    out = dict(BASE)
    out.update({'inferops_rollout_' + key: value for key, value in extra.items()})
    return out


def fleet(count):
    return ['n%02d' % number for number in range(1, count + 1)]


def racks(hosts, width):
    """Hosts in racks of ``width`` hosts each, in order (r1: n01..)."""
    return {host: {'rack': 'r%d' % (index // width + 1)} for index, host in enumerate(hosts)}


def waves(the_plan):
    return [wave['hosts'] for wave in the_plan['waves']]


# --- settings -------------------------------------------------------------------------------

def test_defaults():
    conf, problems = rollout.settings(BASE)
    assert problems == []
    assert conf['inferops_rollout_waves'] == [('count', 1), ('percent', 10.0), ('percent', 50.0), ('percent', 100.0)]
    assert conf['inferops_rollout_max_wave'] == ('percent', 20.0)
    assert conf['inferops_rollout_failure_budget'] == ('count', 0)
    assert conf['inferops_rollout_canary'] is True


def test_required_variables_name_the_fix():
    dummy, problems = rollout.settings({})
    assert problems == [
        'inferops_rollout_group = null: required; set the inventory group to roll out, e.g. '
        '-e inferops_rollout_group=local_nvme',
        'inferops_rollout_state_file = null: required; set a file on the controller that records the rollout, '
        'e.g. -e inferops_rollout_state_file=/var/lib/inferops/rollout-local_nvme.json',
    ]


@pytest.mark.parametrize('name, value, message', [
    ('waves', [1, '10 %', 'ten'], 'inferops_rollout_waves[2] = "ten": not a host count or a percentage; use a '
                                  'whole number of hosts (2) or a percentage of the fleet ("10%")'),
    ('waves', [0], 'inferops_rollout_waves[0] = 0: must be at least 1 host(s); use 1 or more, or a percentage of '
                   'the fleet ("10%")'),
    ('waves', [], 'inferops_rollout_waves = []: must be a non-empty list of wave sizes; use e.g. '
                  '[1, "10%", "50%", "100%"]'),
    ('waves', '1,10%', 'inferops_rollout_waves = "1,10%": must be a non-empty list of wave sizes; use e.g. '
                       '[1, "10%", "50%", "100%"]'),
    ('waves', ['150%'], 'inferops_rollout_waves[0] = "150%": a percentage must be above 0 and at most 100%; '
                        'use e.g. "10%"'),
    ('waves', ['0%'], 'inferops_rollout_waves[0] = "0%": a percentage must be above 0 and at most 100%; '
                      'use e.g. "10%"'),
    ('waves', [True], 'inferops_rollout_waves[0] = true: a boolean is not a host count; use a whole number (2) '
                      'or a percentage of the fleet ("10%")'),
    ('max_wave', 0, 'inferops_rollout_max_wave = 0: must be at least 1 host(s); use 1 or more, or a percentage '
                    'of the fleet ("10%")'),
    ('failure_budget', -1, 'inferops_rollout_failure_budget = -1: must be at least 0 host(s); use 0 or more, or a '
                           'percentage of the fleet ("10%")'),
    ('failure_budget', '101%', 'inferops_rollout_failure_budget = "101%": a percentage must be 0 or more and at '
                               'most 100%; use e.g. "10%"'),
    ('canary', 'maybe', 'inferops_rollout_canary = "maybe": not a boolean; use true or false'),
    ('domain_var', '', 'inferops_rollout_domain_var = "": must be a host variable name (a non-empty string) or '
                       'unset'),
    ('drain_tasks', ['a.yml'], 'inferops_rollout_drain_tasks = ["a.yml"]: must be the path of a task file (a '
                               'non-empty string) or unset'),
])
def test_bad_values_name_variable_value_and_fix(name, value, message):
    dummy, problems = rollout.settings(values(**{name: value}))
    assert message in problems


def test_percent_with_space_and_counts_as_strings_are_fine():
    conf, problems = rollout.settings(values(waves=['2', ' 10 % '], max_wave='3', failure_budget='0%'))
    assert problems == []
    assert conf['inferops_rollout_waves'] == [('count', 2), ('percent', 10.0)]
    assert conf['inferops_rollout_failure_budget'] == ('percent', 0.0)


def test_misspelt_variable_is_refused():
    dummy, problems = rollout.settings(values(wave=[1]))
    assert len(problems) == 1
    assert problems[0].startswith('inferops_rollout_wave = [1]: not a rollout variable (misspelt?); the rollout '
                                  'knows inferops_rollout_audit_severities, ')


def test_canary_accepts_ansible_booleans():
    for text, want in (('no', False), ('yes', True), ('0', False), (1, True)):
        conf, problems = rollout.settings(values(canary=text))
        assert problems == [] and conf['inferops_rollout_canary'] is want


def test_size_rounding():
    assert rollout.size(('percent', 10.0), 25) == 3
    assert rollout.size(('percent', 10.0), 25, rounding='down') == 2
    assert rollout.size(('percent', 10.0), 3, rounding='down', minimum=1) == 1
    assert rollout.size(('percent', 10.0), 3, rounding='down', minimum=0) == 0
    assert rollout.size(('percent', 50.0), 10) == 5
    assert rollout.size(('count', 4), 2) == 4


# --- plans ----------------------------------------------------------------------------------

def test_canary_one_per_rack_then_growing_waves_capped():
    hosts = fleet(20)
    the_plan = rollout.plan(hosts, values(domain_var='rack', waves=[1, '10%', '50%', '100%'], max_wave=5),
                            hostvars=racks(hosts, 5))
    assert the_plan['errors'] == []
    assert waves(the_plan) == [
        ['n01', 'n06', 'n11', 'n16'],                   # one per rack
        ['n02'],                                        # 1
        ['n03', 'n04'],                                 # 10 % of 20
        ['n05', 'n07', 'n08', 'n09', 'n10'],            # 50 % = 10, capped at 5
        ['n12', 'n13', 'n14', 'n15', 'n17'],            # 100 %, capped
        ['n18', 'n19', 'n20'],
    ]
    assert [wave['canary'] for wave in the_plan['waves']] == [True] + [False] * 5
    assert the_plan['serial'] == [4, 1, 2, 5, 5, 3]
    assert the_plan['order'][:5] == [['n01', 0], ['n06', 0], ['n11', 0], ['n16', 0], ['n02', 1]]
    assert the_plan['max_wave'] == 5 and the_plan['budget'] == 0
    assert the_plan['summary'].startswith('rollout of local_nvme: 20 host(s), 0 done before, 20 in 6 wave(s) of '
                                          'at most 5; failure budget 0 host(s). wave 1 (canary): n01, n06, n11, n16;')


def test_no_wave_exceeds_the_maximum_even_the_canary():
    hosts = fleet(12)
    the_plan = rollout.plan(hosts, values(domain_var='rack', max_wave=2, waves=['100%']), hostvars=racks(hosts, 2))
    assert max(the_plan['serial']) == 2
    assert waves(the_plan)[:3] == [['n01', 'n03'], ['n05', 'n07'], ['n09', 'n11']]
    assert all(wave['canary'] for wave in the_plan['waves'][:3])
    assert sum(the_plan['serial']) == 12


def test_default_max_wave_is_a_fifth_of_the_fleet():
    hosts = fleet(10)
    the_plan = rollout.plan(hosts, values())
    assert the_plan['max_wave'] == 2
    assert the_plan['serial'] == [1, 1, 1, 2, 2, 2, 1]


def test_small_fleet_no_domains():
    the_plan = rollout.plan(['a', 'b', 'c'], values(waves=[1, '100%'], max_wave=5))
    assert waves(the_plan) == [['a'], ['b'], ['c']]
    assert [wave['canary'] for wave in the_plan['waves']] == [True, False, False]


def test_no_canary():
    the_plan = rollout.plan(['a', 'b', 'c'], values(canary=False, waves=[2, '100%'], max_wave=5))
    assert waves(the_plan) == [['a', 'b'], ['c']]


def test_domains_from_groups():
    groups = {'all': ['a', 'b', 'c', 'd'], 'rack_x': ['a', 'b'], 'rack_y': ['c', 'd'], 'local_nvme': ['a']}
    the_plan = rollout.plan(['a', 'b', 'c', 'd'], values(domain_group_prefix='rack_', waves=['100%'], max_wave=9),
                            groups=groups)
    assert waves(the_plan) == [['a', 'c'], ['b', 'd']]
    assert the_plan['domains'] == {'a': 'rack_x', 'b': 'rack_x', 'c': 'rack_y', 'd': 'rack_y'}


def test_domain_group_problems():
    groups = {'rack_x': ['a', 'b'], 'rack_y': ['b']}
    the_plan = rollout.plan(['a', 'b', 'c'], values(domain_group_prefix='rack_'), groups=groups)
    assert the_plan['errors'] == [
        'inferops_rollout_domain_group_prefix = "rack_": b is in 2 failure-domain groups (rack_x, rack_y); put '
        'each host in exactly one',
        'inferops_rollout_domain_group_prefix = "rack_": no group starting with it holds c; add each host to one '
        'rack_* group',
    ]
    assert the_plan['waves'] == []


def test_domain_var_set_on_some_hosts_only():
    the_plan = rollout.plan(['a', 'b', 'c'], values(domain_var='rack'), hostvars={'a': {'rack': 1}, 'b': {}})
    assert the_plan['errors'] == [
        'inferops_rollout_domain_var = "rack": rack set on some hosts but not on b, c; set it on every host of '
        'the fleet (host_vars or group_vars), or on none']


def test_domain_must_be_a_name():
    the_plan = rollout.plan(['a'], values(domain_var='rack'), hostvars={'a': {'rack': ['x']}})
    assert the_plan['errors'] == ['rack (host a) = ["x"]: a failure domain must be a name (rack7) or a number']


def test_empty_fleet():
    the_plan = rollout.plan([], values())
    assert the_plan['errors'] == ['inferops_rollout_group = "local_nvme": no host of the inventory (or of --limit) '
                                  'is in this group; name a group with hosts']


def test_settings_errors_stop_the_plan():
    the_plan = rollout.plan(['a'], values(waves='x'))
    assert the_plan['errors'] and the_plan['waves'] == [] and the_plan['serial'] == []


# --- state and resume -----------------------------------------------------------------------

def test_state_file_problems():
    dummy, problems = rollout.parse_state('{oops', '/s.json', 'local_nvme')
    assert problems[0].startswith('inferops_rollout_state_file = "/s.json": not a rollout state (JSON: ')
    assert problems[0].endswith('; point it at a rollout state file or a new path, or remove the file to start over')
    dummy, problems = rollout.parse_state('{"a": 1}', '/s.json', 'local_nvme')
    assert problems == ['inferops_rollout_state_file = "/s.json": not a rollout state (format is not '
                        'inferops.node.rollout/1); point it at a new path']
    text = json.dumps({'format': rollout.STATE_FORMAT, 'group': 'serving', 'done': ['a']})
    dummy, problems = rollout.parse_state(text, '/s.json', 'local_nvme')
    assert problems == ['inferops_rollout_state_file = "/s.json": records a rollout of group "serving", not '
                        '"local_nvme"; use one state file per group']
    state, problems = rollout.parse_state('  ', '/s.json', 'local_nvme')
    assert problems == [] and state['done'] == [] and state['failed'] == {}


def test_resume_skips_done_retries_failed_first_and_canaries_only_uncovered_domains():
    hosts = fleet(6)
    state = {'format': rollout.STATE_FORMAT, 'group': 'local_nvme', 'done': ['n01', 'n03', 'gone'],
             'failed': {'n05': {'wave': 2, 'step': 'converge'}}}
    hostvars = {host: {'rack': rack} for host, rack in zip(hosts, 'aabbcc')}
    the_plan = rollout.plan(hosts, values(domain_var='rack', waves=['100%'], max_wave=9), hostvars=hostvars,
                            state_text=json.dumps(state))
    assert the_plan['errors'] == []
    assert the_plan['done'] == ['n01', 'n03']
    assert the_plan['retried'] == ['n05']
    # racks a and b have a done host: only rack c needs a canary, and the failed host is it
    assert waves(the_plan) == [['n05'], ['n02', 'n04', 'n06']]
    assert 'retried first: n05' in the_plan['summary']


def test_all_done_plans_nothing():
    state = {'format': rollout.STATE_FORMAT, 'group': 'local_nvme', 'done': ['a', 'b']}
    the_plan = rollout.plan(['a', 'b'], values(), state_text=json.dumps(state))
    assert the_plan['waves'] == [] and the_plan['serial'] == []
    assert the_plan['summary'] == 'rollout of local_nvme: all 2 host(s) done already (/tmp/rollout.json); nothing to do'


# --- record and failure budget ----------------------------------------------------------------

def three_host_plan(**extra):
    settings = dict(waves=[1, '100%'], max_wave=1)
    settings.update(extra)
    return rollout.plan(['node1', 'node2', 'node3'], values(**settings))


OK = {'ok': True}


def test_clean_rollout_records_every_wave():
    the_plan = three_host_plan()
    assert waves(the_plan) == [['node1'], ['node2'], ['node3']]
    first = rollout.record(the_plan, 0, {'node1': OK})
    assert first['halt'] is False and first['message'] == 'wave 1 of 3 passed: node1'
    the_plan['state'] = first['state']
    second = rollout.record(the_plan, 1, {'node2': OK})
    the_plan['state'] = second['state']
    last = rollout.record(the_plan, 2, {'node3': OK})
    assert last['halt'] is False and last['finished_with_failures'] is False
    assert last['message'] == 'wave 3 of 3 passed: node3; rollout of local_nvme complete: 3 of 3 host(s) done'
    assert last['state']['done'] == ['node1', 'node2', 'node3']
    assert [entry['passed'] for entry in last['state']['waves']] == [['node1'], ['node2'], ['node3']]
    assert last['state']['halted'] is None


def test_failure_on_second_wave_halts_with_step_and_untouched_hosts():
    the_plan = three_host_plan()
    the_plan['state'] = rollout.record(the_plan, 0, {'node1': OK})['state']
    failed = {'ok': False, 'step': 'converge', 'task': 'kernel_tuning : Refuse bad input',
              'message': 'kernel_tuning_sysctl = ...'}
    result = rollout.record(the_plan, 1, {'node2': failed})
    assert result['halt'] is True
    assert result['state']['halted'] == {'wave': 2, 'reason': '1 failed host(s) exceed the failure budget of 0',
                                         'failed': ['node2'], 'untouched': ['node3']}
    assert result['state']['failed'] == {'node2': {'wave': 2, 'step': 'converge',
                                                   'task': 'kernel_tuning : Refuse bad input',
                                                   'message': 'kernel_tuning_sysctl = ...'}}
    assert result['message'] == (
        'rollout of local_nvme halted after wave 2 of 3: 1 failed host(s) exceed the failure budget of 0. node2 '
        'failed at step converge (task "kernel_tuning : Refuse bad input"): kernel_tuning_sysctl = .... Done: '
        'node1. Left untouched: node3. Fix the cause and rerun the same command to resume (state: '
        '/tmp/rollout.json); node2 retried first.')
    # the rerun resumes: node1 stays done, node2 first, node3 after it
    resumed = rollout.plan(['node1', 'node2', 'node3'], values(waves=[1, '100%'], max_wave=1),
                           state_text=json.dumps(result['state']))
    assert waves(resumed) == [['node2'], ['node3']]
    assert resumed['waves'][0]['canary'] is False   # the only domain is covered by node1
    after = rollout.record(resumed, 0, {'node2': OK})
    assert after['state']['failed'] == {} and after['state']['done'] == ['node1', 'node2']


def test_unreachable_host_counts_as_failed():
    the_plan = three_host_plan()
    result = rollout.record(the_plan, 0, {'node1': None})
    assert result['halt'] is True
    assert result['state']['failed']['node1']['step'] == 'unknown'
    assert 'a canary host failed' in result['message']
    assert 'no outcome recorded (unreachable' in result['message']


def test_budget_counts_across_waves_not_per_batch():
    hosts = fleet(10)
    the_plan = rollout.plan(hosts, values(canary=False, waves=[2], max_wave=2, failure_budget='20%'))
    assert the_plan['budget'] == 2
    bad = {'ok': False, 'step': 'verify', 'task': 'md arrays healthy', 'message': 'degraded'}
    first = rollout.record(the_plan, 0, {'n01': bad, 'n02': OK})
    assert first['halt'] is False and first['finished_with_failures'] is False
    assert first['message'] == ('wave 1 of 5: n01 failed at step verify (task "md arrays healthy"): degraded; 1 '
                                'failed host(s) within the failure budget of 2, the rollout goes on')
    the_plan['state'] = first['state']
    second = rollout.record(the_plan, 1, {'n03': bad, 'n04': OK})
    assert second['halt'] is False
    the_plan['state'] = second['state']
    # a third failure, one per batch: ansible's max_fail_percentage would never stop this
    third = rollout.record(the_plan, 2, {'n05': OK, 'n06': bad})
    assert third['halt'] is True
    assert third['state']['halted']['untouched'] == ['n07', 'n08', 'n09', 'n10']
    assert third['state']['done'] == ['n02', 'n04', 'n05']


def test_failed_canary_halts_within_budget():
    the_plan = three_host_plan(failure_budget=5)
    result = rollout.record(the_plan, 0, {'node1': {'ok': False, 'step': 'drain', 'message': 'lb refused'}})
    assert result['halt'] is True and result['state']['halted']['reason'] == 'a canary host failed'


def test_completion_lists_hosts_left_failed():
    the_plan = rollout.plan(['a', 'b'], values(canary=False, waves=[2], max_wave=2, failure_budget=1))
    result = rollout.record(the_plan, 0, {'a': OK, 'b': {'ok': False, 'step': 'undrain', 'message': 'x'}})
    assert result['halt'] is False and result['finished_with_failures'] is True
    assert result['message'].endswith('rollout of local_nvme complete: 1 of 2 host(s) done, failed (left drained; a '
                                      'rerun retries them): b')


def test_record_rejects_a_wave_outside_the_plan():
    with pytest.raises(ValueError):
        rollout.record(three_host_plan(), 3, {})


# --- verify gate (node audit) ------------------------------------------------------------------

AUDIT = [
    {'id': 'storage.md_health', 'severity': 'critical', 'subject': 'models', 'status': 'FAIL',
     'reason': '1 missing member', 'expected': 'clean', 'observed': 'degraded', 'fix': 'md_raid_xfs / replace'},
    {'id': 'kernel.sysctl', 'severity': 'major', 'subject': 'vm.swappiness', 'status': 'FAIL',
     'reason': 'runtime differs', 'expected': '10', 'observed': '60', 'fix': 'kernel_tuning'},
    {'id': 'platform.smt', 'severity': 'minor', 'subject': None, 'status': 'FAIL', 'reason': 'x',
     'expected': 'on', 'observed': 'off', 'fix': 'BIOS'},
    {'id': 'storage.md_health', 'severity': 'critical', 'subject': 'index', 'status': 'WARN', 'reason': 'resync',
     'expected': 'clean', 'observed': 'resyncing', 'fix': 'wait'},
    {'id': 'nvme.link', 'severity': 'critical', 'subject': 'nvme0', 'status': 'SKIP', 'reason': 'no PCIe link',
     'expected': None, 'observed': None, 'fix': 'reseat'},
]


def test_audit_gate_fails_on_gated_severities_only():
    assert rollout.audit_gate_errors(AUDIT, ['critical', 'major']) == [
        'audit storage.md_health (critical) models: 1 missing member; expected clean, observed degraded; fix: '
        'md_raid_xfs / replace',
        'audit kernel.sysctl (major) vm.swappiness: runtime differs; expected 10, observed 60; fix: kernel_tuning',
    ]
    assert len(rollout.audit_gate_errors(AUDIT, ['critical'])) == 1
    assert rollout.audit_gate_errors(AUDIT, []) == []
    assert rollout.audit_gate_errors(None, ['critical']) == []
    reads = {'md_info': {'failed': True, 'msg': 'mdadm: not found'}, 'sysctl_info': {'changed': False},
             'nvme_info': {'skipped': True}}
    assert rollout.audit_gate_errors([], [], reads) == [
        'audit read md_info failed: mdadm: not found; the checks that need it cannot pass']


def test_audit_severities_setting():
    conf, problems = rollout.settings(values(audit_severities=['critical', 'fatal']))
    assert problems == ['inferops_rollout_audit_severities[1] = "fatal": not an audit severity; use critical, major, '
                        'minor']
    assert conf['inferops_rollout_audit_severities'] == ['critical']
    dummy, problems = rollout.settings(values(audit_severities='critical'))
    assert problems == ['inferops_rollout_audit_severities = "critical": must be a list of audit severities '
                        '(critical, major, minor), [] for no audit gate']
    conf, problems = rollout.settings(values(audit_severities=[]))
    assert problems == [] and conf['inferops_rollout_audit_severities'] == []


def test_long_failure_messages_are_shortened():
    the_plan = three_host_plan(failure_budget=3)
    result = rollout.record(the_plan, 1, {'node2': {'ok': False, 'step': 'verify', 'message': 'x' * 5000}})
    assert len(result['state']['failed']['node2']['message']) == rollout.MESSAGE_LIMIT + 3


def test_state_file_must_be_absolute():
    dummy, problems = rollout.settings(dict(BASE, inferops_rollout_state_file='rollout.json'))
    assert problems == ['inferops_rollout_state_file = "rollout.json": must be an absolute path on the controller, '
                        'e.g. /var/lib/inferops/rollout-local_nvme.json']


def test_group_must_be_a_site_group_and_gives_its_roles():
    sites = {'local_nvme': ['kernel_tuning', 'nvme_sched'], 'serving': ['model_sync']}
    assert rollout.plan(['a'], values(), sites=sites)['roles'] == ['kernel_tuning', 'nvme_sched']
    the_plan = rollout.plan(['a'], dict(BASE, inferops_rollout_group='rack7'), sites=sites)
    assert the_plan['errors'] == ['inferops_rollout_group = "rack7": not a site group; use one of local_nvme, '
                                  'serving (one rollout per group)']


def test_tags_are_refused():
    assert rollout.tag_errors(['all'], []) == []
    assert rollout.tag_errors(None, None) == []
    assert rollout.tag_errors(['kernel_tuning'], ['warmup']) == [
        '--tags kernel_tuning --skip-tags warmup: the rollout converges every role of the site and records each '
        'host as done; run it without --tags/--skip-tags (site.yml --tags <role> reruns one concern)']
    the_plan = rollout.plan(['a'], values(), run_tags=['all'], skip_tags=['md_raid_xfs'])
    assert the_plan['errors'] == [
        '--skip-tags md_raid_xfs: the rollout converges every role of the site and records each host as done; run '
        'it without --tags/--skip-tags (site.yml --tags <role> reruns one concern)']
    assert the_plan['waves'] == []
