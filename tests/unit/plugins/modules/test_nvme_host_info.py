# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""nvme_host_info: the files under a temporary root (module_utils.sysfs.ROOT), ``nvme gen-hostnqn`` replayed from
a lab guest (fixtures/nvme/gen-hostnqn.txt), every command asserted with its C locale."""

from __future__ import annotations

import pytest

from ansible_collections.inferops.node.plugins.module_utils.common import sysfs
from ansible_collections.inferops.node.plugins.modules import nvme_host_info
from ansible_collections.inferops.node.tests.unit.module_harness import Replay, fixture, run_module

GUEST_UUID = '84bee0ec-5450-416c-ae9c-21abe7092a99'
GENERATED = 'nqn.2014-08.org.nvmexpress:uuid:' + GUEST_UUID
ON_FILE = 'nqn.2014-08.org.nvmexpress:uuid:0badc0de-0000-4000-8000-000000000001'
GEN = {'command': ['nvme', 'gen-hostnqn'], 'out': '@nvme/gen-hostnqn.txt'}


@pytest.fixture
def root(tmp_path, monkeypatch):
    monkeypatch.setattr(sysfs, 'ROOT', str(tmp_path))
    (tmp_path / 'etc' / 'nvme').mkdir(parents=True)
    return tmp_path / 'etc' / 'nvme'


def read(monkeypatch, calls, check_mode=False, **args):
    replay = Replay(monkeypatch, calls)
    failed, result = run_module(nvme_host_info.main, args, check_mode=check_mode)
    replay.done()
    return failed, result


def test_fresh_guest_gets_the_generated_nqn_and_its_uuid_even_in_check_mode(root, monkeypatch):
    assert fixture('nvme', 'gen-hostnqn.txt').strip() == GENERATED
    failed, result = read(monkeypatch, [GEN], check_mode=True)
    assert not failed and result['changed'] is False
    assert result['identity'] == {'hostnqn': GENERATED, 'hostid': GUEST_UUID, 'hostnqn_source': 'nvme gen-hostnqn'}
    assert result['hostnqn_file'] is None and result['hostid_file'] is None
    assert result['generated_hostnqn'] == GENERATED
    assert [c['argv'] for c in result['command_log']] == [['nvme', 'gen-hostnqn']]


def test_files_win_and_nothing_runs(root, monkeypatch):
    (root / 'hostnqn').write_text(ON_FILE + '\nsecond line ignored\n')
    (root / 'hostid').write_text('0BADC0DE-0000-4000-8000-00000000FFFF\n')
    failed, result = read(monkeypatch, [])
    assert not failed and result['command_log'] == [] and result['generated_hostnqn'] is None
    # The host ID on file, lower case, not the one in the NQN.
    assert result['identity'] == {'hostnqn': ON_FILE, 'hostid': '0badc0de-0000-4000-8000-00000000ffff',
                                  'hostnqn_source': '/etc/nvme/hostnqn'}


def test_inventory_wins_and_an_empty_file_counts_as_none(root, monkeypatch):
    (root / 'hostnqn').write_text('\n')
    failed, result = read(monkeypatch, [], hostnqn='nqn.2026-01.internal.ai:node1', hostid='')
    assert not failed and result['hostnqn_file'] is None
    identity = result['identity']
    assert identity['hostnqn'] == 'nqn.2026-01.internal.ai:node1' and identity['hostnqn_source'] == 'nvmeof_initiator_hostnqn'
    # No UUID in that NQN: derived from it, the same on every run (ansible's to_uuid).
    assert identity['hostid'] == 'c62f03bd-c145-5333-bd78-5d841da7a078'


def test_a_host_id_on_file_with_a_generated_nqn(root, monkeypatch):
    (root / 'hostid').write_text('0badc0de-0000-4000-8000-00000000ffff\n')
    failed, result = read(monkeypatch, [GEN])
    assert not failed and result['identity']['hostid'] == '0badc0de-0000-4000-8000-00000000ffff'


def test_gen_hostnqn_failing_or_missing_is_named(root, monkeypatch):
    failed, result = read(monkeypatch, [dict(GEN, rc=1, out='', err='failed to read /sys/class/dmi/id/product_uuid')])
    assert failed and result['msg'] == 'nvme gen-hostnqn failed (rc 1): failed to read /sys/class/dmi/id/product_uuid'
    replay = Replay(monkeypatch, [])
    monkeypatch.setattr(nvme_host_info.CommandRunner, 'find', lambda runner, name, opt_dirs=None: None)
    failed, result = run_module(nvme_host_info.main, {})
    replay.done()
    assert failed and result['msg'].startswith('/etc/nvme/hostnqn is missing or empty and nvme-cli')
    assert 'nvmeof_initiator_hostnqn' in result['msg']
