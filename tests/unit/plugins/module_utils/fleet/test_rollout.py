# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""module_utils/fleet/rollout.py: settings, wave plans, failure budget, resumable state."""

from __future__ import annotations

import json

import pytest

from ansible_collections.inferops.node.plugins.module_utils.fleet import rollout

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


def test_canary_refuses_what_ansible_does_not_take_for_a_boolean():
    """Ansible's own conversion decides; a list is a problem to report, not a crash (unhashable)."""
    for value in ([True], {'on': 1}, 2):
        dummy, problems = rollout.settings(values(canary=value))
        assert problems == ['inferops_rollout_canary = %s: not a boolean; use true or false' % json.dumps(value)]


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


def test_audit_gate_fails_on_a_gated_check_not_made():
    unread = dict(AUDIT[0], id='nvme.temperature', subject='S1', status='NOT_CHECKED', reason='smart-log rc=1',
                  expected=70, observed=None, fix='nvme_health')
    assert rollout.audit_gate_errors([unread], ['critical']) == [
        'audit nvme.temperature (critical) S1: NOT CHECKED: smart-log rc=1; expected 70, observed None; fix: nvme_health']
    assert rollout.audit_gate_errors([unread], ['major']) == []


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
    assert the_plan['errors'] == ['inferops_rollout_group = "rack7": not a site group (rack7); use one of '
                                  'local_nvme, serving, or several joined with ":" (nvmeof_targets:nvmeof_initiators)']


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


# --- several site groups: tiers (NVMe-oF targets before initiators) ------------------------------

SITES = {'local_nvme': ['kernel_tuning', 'nvme_sched'], 'nvmeof_targets': ['nvmeof_target'],
         'nvmeof_initiators': ['nvmeof_initiator'], 'serving': ['model_sync', 'triton_compose', 'warmup']}
POOL = {'nvmeof_targets': ['t1', 't2'], 'nvmeof_initiators': ['i1', 'i2', 'i3', 'i4', 'i5']}
POOL_FLEET = ['i1', 'i2', 'i3', 'i4', 'i5', 't1', 't2']   # as a pattern initiators:targets lists them


def pool_plan(state=None, **extra):
    settings = dict(group='nvmeof_initiators:nvmeof_targets', waves=[1, '100%'], max_wave=2)
    settings.update(extra)
    return rollout.plan(POOL_FLEET, values(**settings), groups=POOL, sites=SITES,
                        state_text=None if state is None else json.dumps(state))


def test_targets_roll_out_whole_before_any_initiator_whatever_the_order_written():
    the_plan = pool_plan()
    assert the_plan['errors'] == []
    assert the_plan['group'] == 'nvmeof_targets:nvmeof_initiators'
    assert waves(the_plan) == [['t1'], ['t2'], ['i1'], ['i2'], ['i3', 'i4'], ['i5']]
    assert [wave['tier'] for wave in the_plan['waves']] == [0, 0, 1, 1, 1, 1]
    # each tier has its canary and its own growing waves
    assert [wave['canary'] for wave in the_plan['waves']] == [True, False, True, False, False, False]
    assert the_plan['tiers'] == [{'index': 0, 'groups': ['nvmeof_targets'], 'hosts': ['t1', 't2']},
                                 {'index': 1, 'groups': ['nvmeof_initiators'],
                                  'hosts': ['i1', 'i2', 'i3', 'i4', 'i5']}]
    assert the_plan['host_roles'] == dict({host: ['nvmeof_initiator'] for host in POOL['nvmeof_initiators']},
                                          t1=['nvmeof_target'], t2=['nvmeof_target'])
    assert the_plan['order'][:3] == [['t1', 0], ['t2', 1], ['i1', 2]]
    assert the_plan['summary'].startswith(
        'rollout of nvmeof_targets:nvmeof_initiators: 7 host(s), 0 done before, 7 in 6 wave(s) of at most 2; '
        'failure budget 0 host(s); nvmeof_targets before nvmeof_initiators, each whole before the next starts. '
        'wave 1 (canary, nvmeof_targets): t1; wave 2 (nvmeof_targets): t2; wave 3 (canary, nvmeof_initiators): i1;')


def test_no_wave_mixes_targets_and_initiators():
    the_plan = pool_plan(canary=False, waves=['100%'], max_wave=9)
    assert waves(the_plan) == [['t1', 't2'], ['i1', 'i2', 'i3', 'i4', 'i5']]


def test_a_failed_target_within_the_budget_halts_before_the_initiators():
    the_plan = pool_plan(failure_budget=3)
    the_plan['state'] = rollout.record(the_plan, 0, {'t1': OK})['state']
    result = rollout.record(the_plan, 1, {'t2': {'ok': False, 'step': 'converge', 'task': 'nvmet', 'message': 'x'}})
    assert result['halt'] is True
    assert result['state']['halted'] == {
        'wave': 2, 'failed': ['t2'], 'untouched': ['i1', 'i2', 'i3', 'i4', 'i5'],
        'reason': 'nvmeof_targets not all done (failed: t2), and nvmeof_initiators must not start while a host it '
                  'depends on is mid-change'}
    assert result['message'].startswith(
        'rollout of nvmeof_targets:nvmeof_initiators halted after wave 2 of 6: nvmeof_targets not all done '
        '(failed: t2), and nvmeof_initiators must not start while a host it depends on is mid-change. t2 failed at '
        'step converge (task "nvmet"): x. Done: t1. Left untouched: i1, i2, i3, i4, i5.')
    # the rerun retries t2 alone first (t1's domain is covered), then the initiators' canary and waves
    resumed = pool_plan(state=result['state'], failure_budget=3)
    assert waves(resumed) == [['t2'], ['i1'], ['i2'], ['i3', 'i4'], ['i5']]
    assert resumed['waves'][0]['canary'] is False and resumed['waves'][1]['canary'] is True


def test_a_target_that_failed_in_an_earlier_wave_of_its_tier_halts_at_the_tier_end():
    settings = values(group='nvmeof_targets:nvmeof_initiators', canary=False, waves=[1], max_wave=1, failure_budget=2)
    the_plan = rollout.plan(['t1', 't2', 't3', 'i1'], settings,
                            groups={'nvmeof_targets': ['t1', 't2', 't3'], 'nvmeof_initiators': ['i1']}, sites=SITES)
    bad = {'ok': False, 'step': 'verify', 'message': 'no listener'}
    first = rollout.record(the_plan, 0, {'t1': bad})
    assert first['halt'] is False                 # within the budget, t2 and t3 are still targets
    the_plan['state'] = first['state']
    the_plan['state'] = rollout.record(the_plan, 1, {'t2': OK})['state']
    last_target = rollout.record(the_plan, 2, {'t3': OK})
    assert last_target['halt'] is True
    assert last_target['state']['halted']['failed'] == ['t1']
    assert last_target['state']['halted']['untouched'] == ['i1']
    assert 'halted after wave 3 of 4: nvmeof_targets not all done (failed: t1)' in last_target['message']
    assert '. Done: t2, t3. Left untouched: i1.' in last_target['message']


def test_initiator_failure_within_budget_goes_on():
    the_plan = pool_plan(failure_budget=1, canary=False, waves=[2], max_wave=2)
    for index, wave in enumerate(the_plan['waves'][:2]):
        the_plan['state'] = rollout.record(the_plan, index, {host: OK for host in wave['hosts']})['state']
    result = rollout.record(the_plan, 2, {'i3': {'ok': False, 'step': 'verify', 'message': 'm'}, 'i4': OK})
    assert result['halt'] is False            # the last tier: nothing depends on it


def test_initiators_alone_are_one_tier():
    the_plan = rollout.plan(['i1', 'i2'], values(group='nvmeof_initiators', waves=['100%'], max_wave=2),
                            groups=POOL, sites=SITES)
    assert the_plan['errors'] == [] and len(the_plan['tiers']) == 1
    assert waves(the_plan) == [['i1'], ['i2']]
    assert 'each whole before the next starts' not in the_plan['summary']


def test_a_host_in_both_tiers_is_refused():
    groups = {'nvmeof_targets': ['t1', 'x'], 'nvmeof_initiators': ['x', 'i1']}
    the_plan = rollout.plan(['t1', 'x', 'i1'], values(group='nvmeof_targets:nvmeof_initiators'), groups=groups,
                            sites=SITES)
    assert the_plan['errors'] == [
        'inferops_rollout_group = "nvmeof_targets:nvmeof_initiators": x is in nvmeof_initiators and in '
        'nvmeof_targets, which it depends on: it would change before and after itself; roll them out one at a '
        'time, or take x out of one of them']


def test_a_host_of_two_groups_converges_both_in_the_site_playbooks_order():
    groups = {'local_nvme': ['a', 'b'], 'serving': ['a', 'b']}
    the_plan = rollout.plan(['a', 'b'], values(group='serving:local_nvme'), groups=groups, sites=SITES)
    assert the_plan['errors'] == [] and the_plan['group'] == 'local_nvme:serving'
    assert the_plan['host_roles']['a'] == ['kernel_tuning', 'nvme_sched', 'model_sync', 'triton_compose', 'warmup']
    assert len(the_plan['tiers']) == 1


def test_an_initiator_in_a_group_of_an_earlier_tier_rolls_with_the_initiators():
    # a group that depends on nothing (k8s labels of the same hosts, serving) does not pull an initiator forward
    sites = dict(SITES, labels=['k8s_node_labels'])
    groups = dict(POOL, labels=['i1', 'i2', 'w1'])
    the_plan = rollout.plan(['t1', 't2', 'i1', 'i2', 'w1'],
                            values(group='labels:nvmeof_targets:nvmeof_initiators', canary=False, waves=['100%'],
                                   max_wave=9), groups=groups, sites=sites)
    assert the_plan['errors'] == []
    assert the_plan['group'] == 'nvmeof_targets:labels:nvmeof_initiators'
    assert waves(the_plan) == [['t1', 't2', 'w1'], ['i1', 'i2']]
    assert the_plan['host_roles']['i1'] == ['nvmeof_initiator', 'k8s_node_labels']
    assert the_plan['host_roles']['w1'] == ['k8s_node_labels']


def test_a_tier_is_named_by_the_groups_of_its_hosts():
    """The pool's workers are its initiators (inventories/nvmeof_pool): k8s_workers depends on nothing, but its
    hosts roll with the initiators, and the summary and the halt say so."""
    groups = dict(POOL, k8s_workers=list(POOL['nvmeof_initiators']))
    sites = dict(SITES, k8s_workers=['k8s_node_labels'])
    the_plan = rollout.plan(POOL_FLEET, values(group='nvmeof_targets:nvmeof_initiators:k8s_workers', canary=False,
                                               waves=['100%'], max_wave=9, failure_budget=1),
                            groups=groups, sites=sites)
    assert the_plan['errors'] == [] and waves(the_plan) == [['t1', 't2'], ['i1', 'i2', 'i3', 'i4', 'i5']]
    assert [tier['groups'] for tier in the_plan['tiers']] == [['nvmeof_targets'], ['k8s_workers', 'nvmeof_initiators']]
    assert 'nvmeof_targets before k8s_workers:nvmeof_initiators, each whole' in the_plan['summary']
    result = rollout.record(the_plan, 0, {'t1': OK, 't2': {'ok': False, 'step': 'verify', 'message': 'm'}})
    assert result['state']['halted']['reason'] == (
        'nvmeof_targets not all done (failed: t2), and k8s_workers:nvmeof_initiators must not start while a host it '
        'depends on is mid-change')
    # --limit to the initiators: the targets' tier has no host and keeps its group's name
    limited = rollout.plan(POOL['nvmeof_initiators'], values(group='nvmeof_targets:nvmeof_initiators'),
                           groups=POOL, sites=SITES)
    assert [tier['groups'] for tier in limited['tiers']] == [['nvmeof_targets'], ['nvmeof_initiators']]


def test_a_kubernetes_worker_converges_its_labels_last_whether_the_rollout_names_its_group_or_not():
    """A rollout of the initiators must not leave a worker labelled with the fabric it had before: its
    labels role comes last; a target that is no worker gets none. Sites in site_roles.yml's order."""
    sites = {'local_nvme': ['kernel_tuning', 'nvme_sched'], 'nvmeof_targets': ['nvmeof_target'],
             'nvmeof_initiators': ['nvmeof_initiator'], 'k8s_workers': ['k8s_node_labels'],
             'serving': ['model_sync', 'triton_compose', 'warmup']}
    groups = dict(POOL, k8s_workers=list(POOL['nvmeof_initiators']))
    for group, fleet_ in (('nvmeof_initiators', POOL['nvmeof_initiators']),
                          ('nvmeof_targets:nvmeof_initiators', POOL_FLEET),
                          ('nvmeof_targets:nvmeof_initiators:k8s_workers', POOL_FLEET)):
        the_plan = rollout.plan(fleet_, values(group=group), groups=groups, sites=sites)
        assert the_plan['errors'] == [], group
        assert the_plan['host_roles']['i1'] == ['nvmeof_initiator', 'k8s_node_labels'], group
        assert the_plan['host_roles'].get('t1', ['nvmeof_target']) == ['nvmeof_target'], group
        assert len(the_plan['tiers']) == (1 if group == 'nvmeof_initiators' else 2), group
    # a serving node that is a worker: labelled after the warm-up (triton-ready on a warm server), even
    # when the rollout names k8s_workers, which site_roles.yml lists before serving
    node = {'local_nvme': ['a'], 'serving': ['a'], 'k8s_workers': ['a']}
    for group in ('local_nvme:serving', 'k8s_workers:serving'):
        the_plan = rollout.plan(['a'], values(group=group), groups=node, sites=sites)
        assert the_plan['errors'] == [] and the_plan['host_roles']['a'][-2:] == ['warmup', 'k8s_node_labels'], group
    # a host of no worker group, or a site map without the group: nothing added
    assert rollout.plan(['i1'], values(group='nvmeof_initiators'), groups=POOL, sites=sites)['host_roles'] == {
        'i1': ['nvmeof_initiator']}
    assert rollout.plan(['i1'], values(group='nvmeof_initiators'), groups=groups, sites=SITES)['host_roles'] == {
        'i1': ['nvmeof_initiator']}


def test_several_groups_unknown_one_named():
    the_plan = rollout.plan(['a'], values(group='local_nvme:gpu'), groups={'local_nvme': ['a']}, sites=SITES)
    assert the_plan['errors'] == [
        'inferops_rollout_group = "local_nvme:gpu": not a site group (gpu); use one of local_nvme, nvmeof_initiators, '
        'nvmeof_targets, serving, or several joined with ":" (nvmeof_targets:nvmeof_initiators)']


def test_state_of_a_pool_rollout_resumes_under_either_spelling():
    the_plan = pool_plan()
    state = rollout.record(the_plan, 0, {'t1': OK})['state']
    assert state['group'] == 'nvmeof_targets:nvmeof_initiators'
    resumed = rollout.plan(POOL_FLEET, values(group='nvmeof_targets:nvmeof_initiators', waves=[1, '100%'],
                                              max_wave=2), groups=POOL, sites=SITES, state_text=json.dumps(state))
    assert resumed['errors'] == [] and resumed['done'] == ['t1']


# --- verify gate (warm-up latency) -----------------------------------------------------------------

def warm(model, p99, steady=None, requests=60, errors=0, endpoint='http://127.0.0.1:8000'):
    return {'endpoint': endpoint, 'model': model, 'requests': requests, 'errors': errors, 'p99_ms': p99,
            'steady_p99_ms': steady}


def test_warmup_bound_setting():
    conf, problems = rollout.settings(BASE)
    assert problems == [] and conf['inferops_rollout_warmup_p99_ms'] == {'*': 1000.0}
    conf, problems = rollout.settings(values(warmup_p99_ms='250'))
    assert problems == [] and conf['inferops_rollout_warmup_p99_ms'] == {'*': 250.0}
    conf, problems = rollout.settings(values(warmup_p99_ms={'llama': 800, '*': 100.5}))
    assert problems == [] and conf['inferops_rollout_warmup_p99_ms'] == {'*': 100.5, 'llama': 800.0}
    for off in (False, 'false', 'off'):
        conf, problems = rollout.settings(values(warmup_p99_ms=off))
        assert problems == [] and conf['inferops_rollout_warmup_p99_ms'] == {}


@pytest.mark.parametrize('value, message', [
    (0, 'inferops_rollout_warmup_p99_ms = 0: not a number of milliseconds above 0; use the highest warm-up P99 in '
        'milliseconds a host may show (250), a dict of model: milliseconds with "*" for the other models '
        '({"llama": 800, "*": 100}), or false for no warm-up bound'),
    ('fast', 'inferops_rollout_warmup_p99_ms = "fast": not a number of milliseconds above 0;'),
    (True, 'inferops_rollout_warmup_p99_ms = true: not a number of milliseconds above 0;'),
    ({'llama': -1}, 'inferops_rollout_warmup_p99_ms["llama"] = -1: not a number of milliseconds above 0;'),
    ([100], 'inferops_rollout_warmup_p99_ms = [100]: not a number of milliseconds above 0;'),
])
def test_warmup_bound_bad_values(value, message):
    dummy, problems = rollout.settings(values(warmup_p99_ms=value))
    assert len(problems) == 1 and problems[0].startswith(message)


def test_warmup_gate_judges_the_steady_p99_not_the_cold_start():
    # p99 over the whole warm-up is the first (cold) request; the last window is what the node serves at
    result = {'traffic': {'results': [warm('resnet', 2400.0, steady=38.0), warm('bert', 90.0, steady=310.5)]}}
    assert rollout.warmup_gate_errors(result, {'*': 250.0}) == [
        'warm-up of model bert on http://127.0.0.1:8000: P99 310.5 ms (steady_p99_ms) above the bound of 250 ms '
        '(inferops_rollout_warmup_p99_ms); 60 requests, 0 failed. Look at the node (page cache, CPU pinning, '
        'throttling) or raise the bound for this model']


def test_warmup_gate_falls_back_to_the_whole_p99_and_bounds_per_model():
    result = {'results': [warm('llama', 700.0, requests=10), warm('tiny', 120.0, requests=10),
                          warm('other', 5000.0, requests=10)]}     # triton_warmup's result itself
    problems = rollout.warmup_gate_errors(result, {'llama': 800.0, 'tiny': 100.0})
    assert problems == [
        'warm-up of model tiny on http://127.0.0.1:8000: P99 120.0 ms (p99_ms) above the bound of 100 ms '
        '(inferops_rollout_warmup_p99_ms); 10 requests, 0 failed. Look at the node (page cache, CPU pinning, '
        'throttling) or raise the bound for this model']   # 'other' has no bound and no "*"


def test_warmup_gate_without_latency():
    result = {'traffic': {'results': [warm('a', None, requests=20, errors=20), warm('b', None, requests=0)]}}
    assert rollout.warmup_gate_errors(result, {'*': 100.0}) == [
        'warm-up of model a on http://127.0.0.1:8000: no successful request (20 of 20 failed), no latency to judge']
    assert rollout.warmup_gate_errors(None, {'*': 100.0}) == [
        'no warm-up result to judge (the warmup role did not run or published nothing); a warm-up P99 bound needs '
        'one']
    assert rollout.warmup_gate_errors(None, {}) == []
    assert rollout.warmup_gate_errors({'traffic': {'results': [warm('a', 9e9)]}}, {}) == []
