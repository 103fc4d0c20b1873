# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Node label rules (module_utils/serving/node_labels.py).

* The checks replay what ``nvme_info`` and ``sysctl_info`` return on recorded guests: compute1 of the
  nvmeof_pool scenario (fixtures/nvme/nvmeof: ``sysfs_tcp_live`` - the pool over TCP at 4 MiB read-ahead,
  ``sysfs_two_paths`` - a TCP and an RDMA path after a reconnect reset the read-ahead to 128 KiB,
  ``sysfs_rdma_connecting`` - the RDMA path reconnecting, ``sysfs_empty`` - nothing connected) and ktrec
  (fixtures/sysctl/converged: the kernel_tuning drop-in with two keys overridden by a later local file).
* Label names and values are checked against the real kubectl client (``kubectl label --local
  --dry-run=client`` on a Node manifest, no cluster): it must accept exactly what our rule accepts.
"""

from __future__ import annotations

import datetime
import json
import os
import shutil
import subprocess

import pytest

from ansible_collections.inferops.node.plugins.module_utils.serving import node_labels as nl
from ansible_collections.inferops.node.plugins.modules import nvme_info, sysctl_info
from ansible_collections.inferops.node.tests.unit.module_harness import FakeHost, run_module

POOL = 'nqn.2026-09.internal.ai:lab-pool'
P = nl.DEFAULT_PREFIX + '/'
DROPIN = '/etc/sysctl.d/90-inferops-kernel-tuning.conf'
LOCAL = '/etc/sysctl.d/99-zz-local.conf'


class Compute1(FakeHost):
    fixtures = 'nvme/nvmeof'
    snapshot_file = '%s.json'


class Ktrec(FakeHost):
    fixtures = 'sysctl'
    snapshot_file = '%s.json'


def nvme(tmp_path, monkeypatch, snapshot):
    Compute1(tmp_path / snapshot, monkeypatch, snapshot)
    failed, result = run_module(nvme_info.main, {})
    assert not failed
    return result


def sysctl_read(host=None):
    """As the role reads: the files first (no names), then the drop-in's keys."""
    dummy, files = run_module(sysctl_info.main, {'names': []})
    keys = [f for f in files['files'] if f['path'] == DROPIN][0]['settings'] if any(
        f['path'] == DROPIN for f in files['files']) else {}
    failed, result = run_module(sysctl_info.main, {'names': sorted(keys)})
    assert not failed
    return result


def expect(**kwargs):
    base = {'prefix': nl.DEFAULT_PREFIX, 'nvmeof_connections': [{'subnqn': POOL, 'transport': 'tcp'}],
            'nvmeof_read_ahead_kb': 4096, 'tuning_profile': None, 'sysctl_file': DROPIN}
    base.update(kwargs)
    return base


# ---- checks on recorded info results ----------------------------------------------------------------

def test_tcp_live_at_4mib_earns_every_storage_label(tmp_path, monkeypatch):
    plan = nl.plan(expect(), nvme(tmp_path, monkeypatch, 'sysfs_tcp_live'))
    assert plan['errors'] == [] and plan['failed'] == []
    assert plan['labels'] == {P + 'nvmeof-connected': 'true', P + 'nvmeof-transport': 'tcp',
                              P + 'nvmeof-read-ahead-kb': '4096', P + 'storage-profile': 'nvmeof'}
    assert [c['reason'] for c in plan['checks']][:2] == [
        '1 subsystem(s) live on the expected transport', '2 namespace(s) at 4096 KiB']


def test_wrong_transport_earns_nothing(tmp_path, monkeypatch):
    plan = nl.plan(expect(nvmeof_connections=[{'subnqn': POOL, 'transport': 'rdma'}]),
                   nvme(tmp_path, monkeypatch, 'sysfs_tcp_live'))
    assert plan['labels'] == {}
    assert plan['failed'] == ['nvmeof_connected', 'nvmeof_read_ahead', 'storage_profile']
    assert plan['checks'][0]['reason'] == POOL + ': no live rdma controller (nvme0 tcp live)'


def test_read_ahead_reset_by_reconnect_withdraws_its_labels(tmp_path, monkeypatch):
    """Both paths live, but the reconnect left 128 KiB: connected yes, read-ahead and profile no."""
    plan = nl.plan(expect(nvmeof_connections=[{'subnqn': POOL, 'transport': 'rdma'}]),
                   nvme(tmp_path, monkeypatch, 'sysfs_two_paths'))
    assert plan['labels'] == {P + 'nvmeof-connected': 'true', P + 'nvmeof-transport': 'rdma'}
    assert plan['failed'] == ['nvmeof_read_ahead', 'storage_profile']
    assert plan['checks'][1]['reason'] == 'nvme0n1 read_ahead_kb 128; nvme0n2 read_ahead_kb 128'


def test_reconnecting_path_and_no_connection(tmp_path, monkeypatch):
    plan = nl.plan(expect(nvmeof_connections=[{'subnqn': POOL, 'transport': 'rdma'}], nvmeof_read_ahead_kb=None),
                   nvme(tmp_path, monkeypatch, 'sysfs_rdma_connecting'))
    assert plan['labels'] == {} and plan['failed'] == ['nvmeof_connected', 'storage_profile']
    assert 'nvme1 rdma connecting' in plan['checks'][0]['reason']
    plan = nl.plan(expect(), nvme(tmp_path, monkeypatch, 'sysfs_empty'))
    assert plan['labels'] == {} and plan['checks'][0]['reason'] == POOL + ': no live tcp controller (not connected)'


def test_two_transports_give_no_transport_label(tmp_path, monkeypatch):
    conns = [{'subnqn': POOL, 'transport': 'tcp'}, {'subnqn': POOL, 'transport': 'rdma'}]
    plan = nl.plan(expect(nvmeof_connections=conns, nvmeof_read_ahead_kb=None),
                   nvme(tmp_path, monkeypatch, 'sysfs_two_paths'))
    assert plan['labels'] == {P + 'nvmeof-connected': 'true', P + 'storage-profile': 'nvmeof'}


def test_sysctl_drift_withholds_the_tuning_labels(tmp_path, monkeypatch):
    Ktrec(tmp_path, monkeypatch, 'converged')
    plan = nl.plan(expect(nvmeof_connections=[], nvmeof_read_ahead_kb=None, tuning_profile='local_nvme'),
                   None, sysctl_read())
    assert plan['labels'] == {} and plan['failed'] == ['tuning_profile']
    assert plan['checks'][0]['reason'] == (
        'net.ipv4.tcp_fin_timeout is "30" at runtime, the drop-in sets "15"; '
        'vm.swappiness is "10" at runtime, the drop-in sets "1"')


def test_sysctl_applied_earns_profile_and_hash(tmp_path, monkeypatch):
    host = Ktrec(tmp_path, monkeypatch, 'converged')
    # As after removing the local file and `sysctl --system`: the drop-in's values are live.
    os.unlink(host.path(LOCAL))
    for key, value in (('net/ipv4/tcp_fin_timeout', '15\n'), ('vm/swappiness', '1\n')):
        with open(host.path('/proc/sys/' + key), 'w') as handle:
            handle.write(value)
    info = sysctl_read()
    settings = [f for f in info['files'] if f['path'] == DROPIN][0]['settings']
    plan = nl.plan(expect(nvmeof_connections=[], nvmeof_read_ahead_kb=None, tuning_profile='local_nvme'), None, info)
    assert plan['failed'] == [] and plan['checks'][0]['reason'].startswith('10 parameter(s) of ' + DROPIN)
    assert plan['labels'] == {P + 'tuning-profile': 'local_nvme', P + 'tuning-profile-hash': nl.profile_hash(settings)}
    assert plan['labels'][P + 'tuning-profile-hash'] == '73f93173cb66a4f4'


def test_sysctl_later_file_at_boot_fails_even_when_runtime_matches(tmp_path, monkeypatch):
    host = Ktrec(tmp_path, monkeypatch, 'converged')
    for key, value in (('net/ipv4/tcp_fin_timeout', '15\n'), ('vm/swappiness', '1\n')):
        with open(host.path('/proc/sys/' + key), 'w') as handle:
            handle.write(value)
    plan = nl.plan(expect(nvmeof_connections=[], nvmeof_read_ahead_kb=None, tuning_profile='local_nvme'),
                   None, sysctl_read())
    assert plan['labels'] == {}
    assert 'vm.swappiness is set at boot by %s, after the drop-in' % LOCAL in plan['checks'][0]['reason']


def test_missing_dropin(tmp_path, monkeypatch):
    Ktrec(tmp_path, monkeypatch, 'fresh')
    plan = nl.plan(expect(nvmeof_connections=[], nvmeof_read_ahead_kb=None, tuning_profile='nvmeof'), None,
                   sysctl_read())
    assert plan['labels'] == {} and 'missing, unreadable or empty' in plan['checks'][0]['reason']


def test_profile_hash_follows_values_not_order_or_spacing():
    a = nl.profile_hash({'vm.swappiness': '0', 'net.ipv4.tcp_rmem': '4096 131072  6291456'})
    assert a == nl.profile_hash({'net.ipv4.tcp_rmem': '4096 131072 6291456', 'vm.swappiness': 0})
    assert a != nl.profile_hash({'vm.swappiness': '1', 'net.ipv4.tcp_rmem': '4096 131072 6291456'})
    assert len(a) == 16 and not nl.label_value_errors(a)
    # the kernel_tuning rule's comparison (module_utils/kernel/sysctl.py normalize): 010 is the setting 10
    assert nl.profile_hash({'vm.swappiness': '010'}) == nl.profile_hash({'vm.swappiness': 10})


def test_runtime_compared_as_sysctl_compares_it():
    """A runtime value equal to the drop-in's by sysctl.differs (whitespace, integer forms) passes."""
    info = {'files': [{'path': DROPIN, 'readable': True, 'settings': {'vm.swappiness': '010',
                                                                      'net.ipv4.tcp_rmem': '4096 131072 6291456'}}],
            'parameters': {'vm.swappiness': '10', 'net.ipv4.tcp_rmem': '4096\t131072   6291456'},
            'set_by': {'vm.swappiness': {'file': DROPIN}, 'net.ipv4.tcp_rmem': {'file': DROPIN}}}
    plan = nl.plan(expect(nvmeof_connections=[], nvmeof_read_ahead_kb=None, tuning_profile='p'), None, info)
    assert plan['failed'] == []
    info['parameters']['vm.swappiness'] = '11'
    plan = nl.plan(expect(nvmeof_connections=[], nvmeof_read_ahead_kb=None, tuning_profile='p'), None, info)
    assert plan['checks'][0]['reason'] == 'vm.swappiness is "11" at runtime, the drop-in sets "010"'


# ---- input ------------------------------------------------------------------------------------------

def test_expect_errors_name_variable_value_and_fix():
    errors = nl.expect_errors({'prefix': 'node.kubernetes.io', 'nvmeof_connections': [
        {'subnqn': 'pool', 'transport': 'tcp'}, {'subnqn': POOL, 'transport': 'fc'}],
        'nvmeof_read_ahead_kb': '4M', 'tuning_profile': 'bad profile', 'sysctl_file': 'rel'})
    assert errors == [
        'k8s_node_labels_prefix = "node.kubernetes.io": nfd-master never publishes labels in kubernetes.io or its '
        'sub-namespaces (except feature.node.kubernetes.io and profile.node.kubernetes.io and theirs); use e.g. '
        'inferops.feature.node.kubernetes.io',
        'k8s_node_labels_nvmeof_connections[0] (subnqn=pool).subnqn = "pool": must be an NQN '
        '(nqn.yyyy-mm.<domain>:...), the subsystem the host connects to',
        'k8s_node_labels_nvmeof_connections[1] (subnqn=%s).transport = "fc": must be one of tcp, rdma' % POOL,
        'k8s_node_labels_nvmeof_read_ahead_kb = "4M": must be a whole number of KiB (4096 for 4 MiB) or null',
        'k8s_node_labels_tuning_profile = "bad profile": the label value "bad profile" must be letters, digits, '
        '"-", "_" or "." and begin and end with a letter or digit',
        'k8s_node_labels_sysctl_file = "rel": must be the absolute path of the kernel_tuning drop-in',
    ]
    assert nl.plan({'prefix': 'k8s.io'})['labels'] == {}


# '60' is what -e k8s_node_labels_nvmeof_settle_seconds=60 gives: taken as Ansible's int type takes it.
@pytest.mark.parametrize('settle, ok', [(0, True), (60, True), (-1, False), ('60', True), ('6.5', False),
                                        ('-1', False), (True, False)])
def test_settle_seconds(settle, ok):
    errors = nl.expect_errors({'nvmeof_settle_seconds': settle})
    assert errors == ([] if ok else ['k8s_node_labels_nvmeof_settle_seconds = %s: must be a whole number of seconds, '
                                     '0 or more (60: a minute for a reconnect in progress)' % nl.shown(settle)])


@pytest.mark.parametrize('expiry, refresh, errors', [
    ('2', '1', []), (2, '1', []), ('24', 12, []), ('2.0', '1', []),
    ('2.5', '1', ['k8s_node_labels_expiry_hours = "2.5": must be a whole number of hours, at least 1']),
    ('0', '1', ['k8s_node_labels_expiry_hours = "0": must be a whole number of hours, at least 1']),
    ('2', '3', ['k8s_node_labels_refresh_hours = "3": must be a whole number of hours between 1 and '
                'k8s_node_labels_expiry_hours (2)']),
    (True, 1, ['k8s_node_labels_expiry_hours = true: must be a whole number of hours, at least 1']),
])
def test_lifetime_given_with_extra_vars_as_strings(expiry, refresh, errors):
    # -e k8s_node_labels_expiry_hours=2 hands the role the string "2".
    assert nl.expect_errors({'expiry_hours': expiry, 'refresh_hours': refresh}) == errors


def test_read_ahead_given_as_a_string_is_checked_as_a_number():
    connections = [{'subnqn': POOL, 'transport': 'tcp'}]
    assert nl.expect_errors({'nvmeof_connections': connections, 'nvmeof_read_ahead_kb': '4096'}) == []


@pytest.mark.parametrize('subnqn', ['nqn.pool', 'nqn.1900-01.internal.ai:pool', 'nqn.2026-09.internal.ai:a/b'])
def test_subnqn_follows_the_nvmeof_roles_nqn_rule(subnqn):
    """What nvmeof_initiator would refuse to connect to (module_utils/storage/nvme_common.py check_nqn) is refused."""
    errors = nl.expect_errors({'nvmeof_connections': [{'subnqn': subnqn, 'transport': 'tcp'}]})
    assert errors == ['k8s_node_labels_nvmeof_connections[0] (subnqn=%s).subnqn = "%s": must be an NQN '
                      '(nqn.yyyy-mm.<domain>:...), the subsystem the host connects to' % (subnqn, subnqn)]
    assert nl.expect_errors({'nvmeof_connections': [{'subnqn': POOL, 'transport': 'tcp'}]}) == []


@pytest.mark.parametrize('prefix, ok', [
    ('inferops.feature.node.kubernetes.io', True), ('feature.node.kubernetes.io', True),
    ('a.profile.node.kubernetes.io', True), ('inferops.node', True), ('example.com', True),
    ('kubernetes.io', False), ('node.kubernetes.io', False), ('x.k8s.io', False), ('Inferops.io', False),
])
def test_prefix(prefix, ok):
    assert (nl.prefix_errors(prefix) == []) is ok


# ---- the file ---------------------------------------------------------------------------------------

NOW = datetime.datetime(2026, 12, 2, 2, 0, 0, 123456, tzinfo=datetime.timezone.utc)


def test_render_parse_round_trip():
    labels = {P + 'b': 'x', P + 'a': 'true'}
    text = nl.render(labels, NOW + datetime.timedelta(hours=24))
    assert text.splitlines()[2:] == ['# +expiry-time=2026-12-03T02:00:00Z', P + 'a=true', P + 'b=x']
    assert nl.parse(text) == {'expiry': datetime.datetime(2026, 12, 3, 2, tzinfo=datetime.timezone.utc),
                              'labels': labels}
    assert nl.parse('# +expiry-time=2026-12-03T04:00:00+02:00\nflag\n')['expiry'] == datetime.datetime(
        2026, 12, 3, 2, tzinfo=datetime.timezone.utc)
    assert nl.parse('# +expiry-time=tomorrow\nflag\n') == {'expiry': None, 'labels': {'flag': 'true'}}


def test_file_plan_idempotence_and_refresh():
    labels = {P + 'a': 'true'}
    first = nl.file_plan(None, labels, NOW, 86400, 43200)
    assert first['changed'] and first['reason'] == 'no file yet'
    again = nl.file_plan(first['content'], labels, NOW + datetime.timedelta(hours=11), 86400, 43200)
    assert not again['changed'] and again['content'] == first['content']
    late = nl.file_plan(first['content'], labels, NOW + datetime.timedelta(hours=13), 86400, 43200)
    assert late['changed'] and late['reason'].startswith('expiry in ')
    assert nl.format_time(late['expiry']) == '2026-12-03T15:00:00Z'  # 13 h + 24 h
    fewer = nl.file_plan(first['content'], {}, NOW, 86400, 43200)
    assert fewer['changed'] and fewer['reason'] == 'labels changed' and '=' not in fewer['content'].split('\n', 3)[3]


# ---- label names and values: our rule against kubectl's --------------------------------------------

def kubectl():
    found = shutil.which('kubectl') or ('/usr/bin/kubectl' if os.path.exists('/usr/bin/kubectl') else None)
    if not found:
        pytest.fail('kubectl (the client alone) is needed by these tests: install it (e.g. the kubectl Debian '
                    'package from pkgs.k8s.io)')
    return found


def kubectl_label(tmp_path, labels):
    """The kubectl client on ``labels``, no cluster: (rc, labels it set on the Node, stderr).

    ``kubectl label --local --dry-run=client`` on a Node manifest checks the values only (the API server
    checks the names); ``kubectl set selector --local`` on a Service manifest parses the same pairs with
    apimachinery's label selector parser, which checks names (IsQualifiedName) and values
    (IsValidLabelValue) as the API server does. Both must accept.
    """
    env = {'PATH': '/usr/bin:/bin', 'HOME': str(tmp_path), 'LC_ALL': 'C'}
    pairs = ['%s=%s' % (name, value) for name, value in sorted(labels.items())]
    node = tmp_path / 'node.yaml'
    node.write_text('apiVersion: v1\nkind: Node\nmetadata:\n  name: compute1\n')
    service = tmp_path / 'service.yaml'
    service.write_text('apiVersion: v1\nkind: Service\nmetadata:\n  name: serving\nspec:\n  ports: [{port: 8000}]\n')
    selector = subprocess.run([kubectl(), 'set', 'selector', '--local', '--dry-run=client', '-o', 'json',
                               '-f', str(service), '--', ','.join(pairs)],
                              capture_output=True, text=True, env=env, timeout=60, check=False)
    if selector.returncode != 0:
        return selector.returncode, None, selector.stderr
    label = subprocess.run([kubectl(), 'label', '--local', '--dry-run=client', '-o', 'json', '-f', str(node), '--']
                           + pairs, capture_output=True, text=True, env=env, timeout=60, check=False)
    if label.returncode != 0:
        return label.returncode, None, label.stderr
    return 0, json.loads(label.stdout)['metadata'].get('labels', {}), ''


CASES = [
    ('inferops.feature.node.kubernetes.io/storage-profile', 'nvmeof'),
    ('a' * 63, ''),
    ('x.y/A_b.9', 'A-1_b.2'),
    ('.'.join(['a' * 63] * 3) + '.' + 'b' * 61 + '/n', 'v'),   # a 253-character prefix
    ('.'.join(['a' * 63] * 4) + '/n', 'v'),                     # 255
    ('a' * 64, 'v'),
    ('-a', 'v'),
    ('a_', 'v'),
    ('Inferops.io/x', 'v'),
    ('pre_fix.io/x', 'v'),
    ('a/b/c', 'v'),
    ('/a', 'v'),
    ('x', 'a' * 64),
    ('x', '-a'),
    ('x', 'a b'),
    ('x', 'a/b'),
    ('x', 'local_nvme'),
]


@pytest.mark.parametrize('name, value', CASES)
def test_rule_agrees_with_kubectl(tmp_path, name, value):
    ours = nl.label_errors({name: value})
    rc, labels, stderr = kubectl_label(tmp_path, {name: value})
    assert (rc == 0) == (ours == []), (ours, stderr)
    if rc == 0:
        assert labels == {name: value}


@pytest.mark.parametrize('bad, ours', [
    ({P + 'tuning-profile': 'nvmeof_'}, P + 'tuning-profile: the label value "nvmeof_" must be letters, digits, '
     '"-", "_" or "." and begin and end with a letter or digit'),
    ({'Inferops.io/tuned': 'true'}, 'Inferops.io/tuned: the prefix "Inferops.io" must be a DNS subdomain: lower-case '
     'letters, digits, "-" and ".", each dot-separated part beginning and ending with a letter or digit'),
])
def test_kubectl_refuses_an_invalid_label_and_so_do_we(tmp_path, bad, ours):
    rc, dummy, stderr = kubectl_label(tmp_path, bad)
    assert rc != 0 and 'Invalid value: "%s"' % (list(bad.values())[0] if 'nvmeof_' in stderr else list(bad)[0]) in stderr
    assert nl.label_errors(bad) == [ours]


def test_published_labels_pass_kubectl(tmp_path, monkeypatch):
    plan = nl.plan(expect(), nvme(tmp_path, monkeypatch, 'sysfs_tcp_live'))
    plan_labels = dict(plan['labels'], **{P + 'tuning-profile': 'local_nvme',
                                          P + 'tuning-profile-hash': nl.profile_hash({'vm.swappiness': 1})})
    rc, labels, stderr = kubectl_label(tmp_path, plan_labels)
    assert rc == 0, stderr
    assert labels == plan_labels


# ---- the node health check's gate on triton-ready --------------------------------------------------------------

GATE_EXPIRY = datetime.datetime(2026, 12, 3, 2, 0, tzinfo=datetime.timezone.utc)
GATED = P + 'triton-ready'


def test_health_gate_withdraws_and_returns_only_its_label():
    labels = {GATED: 'true', P + 'storage-profile': 'nvmeof'}
    text = nl.render(labels, GATE_EXPIRY)
    out = nl.health_gate(text, None, GATED, ready=False)
    assert out['action'] == 'removed'
    assert nl.parse(out['content']) == {'expiry': GATE_EXPIRY, 'labels': {P + 'storage-profile': 'nvmeof'}}
    assert out['hold'] == {'label': GATED, 'value': 'true', 'file': out['content']}
    # not ready again: nothing to write, the hold kept
    again = nl.health_gate(out['content'], out['hold'], GATED, ready=False)
    assert again == {'action': 'held', 'content': None, 'hold': out['hold']}
    # ready: the file as it was, the role's expiry kept
    back = nl.health_gate(out['content'], out['hold'], GATED, ready=True)
    assert back == {'action': 'restored', 'content': text, 'hold': None}
    # ready with nothing held: nothing
    assert nl.health_gate(text, None, GATED, ready=True) == {'action': 'unchanged', 'content': None, 'hold': None}


def test_health_gate_leaves_the_role_decision_alone():
    text = nl.render({GATED: 'true'}, GATE_EXPIRY)
    hold = nl.health_gate(text, None, GATED, ready=False)['hold']
    # k8s_node_labels ran in between and decided without triton-ready: the hold is dropped, the file stays.
    rewritten = nl.render({P + 'storage-profile': 'nvmeof'}, GATE_EXPIRY + datetime.timedelta(hours=3))
    out = nl.health_gate(rewritten, hold, GATED, ready=True)
    assert out['content'] is None and out['hold'] is None and out['action'].startswith('hold dropped')
    # No file, no label, or a file without an expiry (not the role's): nothing is written.
    assert nl.health_gate(None, None, GATED, ready=False)['content'] is None
    assert nl.health_gate(nl.render({P + 'x': 'y'}, GATE_EXPIRY), None, GATED, ready=False)['content'] is None
    assert nl.health_gate('%s=true\n' % GATED, None, GATED, ready=False)['content'] is None
