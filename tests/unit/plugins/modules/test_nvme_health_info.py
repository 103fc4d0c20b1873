# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""nvme_health_info replayed on lab guest auditrec (fixtures/audit/fresh: six QEMU NVMe drives, nvme-cli 2.3;
QEMU's SMART log reports 323 K)."""

from __future__ import annotations

import pytest

from ansible_collections.inferops.node.plugins.module_utils.storage import nvme_health
from ansible_collections.inferops.node.plugins.modules import nvme_health_info
from ansible_collections.inferops.node.tests.unit.module_harness import FakeHost, fixture, run_module

SERIALS = ['LABMODEL0', 'LABMODEL1', 'LABMODEL2', 'LABMODEL3', 'LABINDEX0', 'LABINDEX1']


class Guest(FakeHost):
    fixtures = 'audit'
    snapshot_file = '%s/snapshot.json'

    def __init__(self, tmp_path, monkeypatch, state='fresh'):
        super(Guest, self).__init__(tmp_path, monkeypatch, state)
        for n in range(6):
            self.on(smart_log(n), out='@%s/smart-log.nvme%d.json' % (state, n))


def smart_log(n):
    return ['nvme', 'smart-log', '/dev/nvme%d' % n, '-o', 'json']


@pytest.fixture
def guest(tmp_path, monkeypatch):
    return Guest(tmp_path, monkeypatch)


def test_recorded_guest(guest):
    failed, result = run_module(nvme_health_info.main, {})
    assert not failed and result['changed'] is False
    assert guest.calls == [smart_log(n) for n in range(6)]
    assert [entry['argv'] for entry in result['command_log']] == guest.calls
    assert [c['serial'] for c in result['controllers']] == SERIALS
    first = result['controllers'][0]
    assert first['name'] == 'nvme0' and first['device'] == '/dev/nvme0' and first['firmware'] == '7.2.22'
    assert first['model'] == 'QEMU NVMe Ctrl' and first['transport'] == 'pcie' and first['pci_address'] == '0000:00:03.0'
    assert first['state'] == 'live'
    # The SMART log gives Kelvin: QEMU's 323 K is 50 C.
    assert first['temperature_k'] == 323 and first['temperature_c'] == 50 and first['sensors_c'] == []
    assert first['critical_warning'] == 0 and first['percent_used'] == 0 and first['media_errors'] == 0
    assert first['available_spare'] == 0 and first['available_spare_threshold'] == 0
    assert first['error'] is None
    # QEMU's NVMe has no PCIe capability: the kernel knows no link.
    assert first['pci_link']['downgraded'] is None


def test_check_mode_reads_the_same(guest):
    assert run_module(nvme_health_info.main, {}) == run_module(nvme_health_info.main, {}, check_mode=True)


def test_unreadable_log_is_reported_not_fatal(guest):
    guest.on(smart_log(3), rc=1, err='NVMe status: Access Denied: Access to the namespace and/or LBA range is denied\n')
    failed, result = run_module(nvme_health_info.main, {})
    assert not failed
    bad = result['controllers'][3]
    assert bad['error'] == ('nvme smart-log /dev/nvme3: rc=1 NVMe status: Access Denied: Access to the namespace '
                            'and/or LBA range is denied')
    assert bad['temperature_c'] is None and bad['serial'] == 'LABMODEL3'


def test_an_empty_answer_is_read_again(guest):
    # nvme-cli answered rc 0 and nothing once on a starved lab guest: the second read counts.
    guest.on(smart_log(2), out='', then=lambda: guest.on(smart_log(2), out='@fresh/smart-log.nvme2.json'))
    failed, result = run_module(nvme_health_info.main, {})
    assert not failed and guest.calls == [smart_log(0), smart_log(1), smart_log(2), smart_log(2)] + [
        smart_log(n) for n in range(3, 6)]
    assert result['controllers'][2]['error'] is None and result['controllers'][2]['temperature_c'] == 50


def test_two_answers_without_json_are_reported(guest):
    guest.on(smart_log(2), out='')
    failed, result = run_module(nvme_health_info.main, {})
    assert not failed and guest.calls.count(smart_log(2)) == 2
    assert result['controllers'][2]['error'].startswith('nvme smart-log /dev/nvme2: not JSON (')
    assert result['controllers'][2]['error'].endswith(', read twice')
    assert result['controllers'][2]['temperature_c'] is None


def test_parse_other_key_names():
    """Key names of other nvme-cli versions (percentage_used, critical_warning as an object)."""
    text = fixture('audit', 'fresh/smart-log.nvme0.json').replace('"percent_used"', '"percentage_used"')
    text = text.replace('"critical_warning":0', '"critical_warning":{"value":4}')
    parsed = nvme_health.parse_smart_log(text)
    assert parsed['percent_used'] == 0 and parsed['critical_warning'] == 4


def test_not_json():
    with pytest.raises(ValueError):
        nvme_health.parse_smart_log('smart log for /dev/nvme0\n')
