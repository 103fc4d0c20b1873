# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The nic_queues_errors filter: the role's input check alone, and against a nic_info result built from the
recorded lab guest (fixtures/nic/fresh.json: the 2-queue virtio NIC enp0s17)."""

from __future__ import annotations

import json

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.node.plugins.filter.nic_queues import nic_queues_errors
from ansible_collections.inferops.node.plugins.module_utils.common import sysfs
from ansible_collections.inferops.node.plugins.module_utils.interrupts import nic_queues
from ansible_collections.inferops.node.tests.unit.module_harness import build_tree, fixture


@pytest.fixture
def host(tmp_path, monkeypatch):
    root = str(tmp_path / 'guest')
    build_tree(json.loads(fixture('nic', 'fresh.json')), root)
    monkeypatch.setattr(sysfs, 'ROOT', root)
    return {'interfaces': nic_queues.interfaces(), 'online_cpus': '0-1'}


def test_input_only_names_the_role_variables():
    assert nic_queues_errors([], None, 'nic_queues_interfaces', [], 'nic_queues_cpu_groups') == []
    assert nic_queues_errors([{'mac': '52:54:00:88:00:99', 'rps': None}], None, 'nic_queues_interfaces',
                             [], 'nic_queues_cpu_groups') == [
        'nic_queues_cpu_groups = []: must be a non-empty list of CPU lists, one per serving instance '
        '(e.g. ["0-31", "32-63"])']
    # An unknown MAC is only known to be unknown on the host.
    assert nic_queues_errors([{'mac': '52:54:00:88:00:99'}], None, 'v', ['0']) == []


def test_against_the_host(host):
    assert nic_queues_errors([{'mac': '52:54:00:88:00:01'}], host, 'v', ['1', '0']) == []
    errors = nic_queues_errors([{'mac': '52:54:00:88:00:99'}, {'name': 'enp0s17', 'cpu_groups': '2'}], host,
                               'nic_queues_interfaces', ['1', '0'], 'nic_queues_cpu_groups')
    assert errors == [
        'nic_queues_interfaces[1].cpu_groups = "2": group 0 has CPU(s) 2 that are not online (online: 0-1)']
    errors = nic_queues_errors([{'mac': '52:54:00:88:00:99'}], host, 'nic_queues_interfaces', ['0-1'])
    assert errors == ['nic_queues_interfaces[0].mac = "52:54:00:88:00:99": no interface on this host has this mac '
                      '(interfaces: enp0s17 (mac 52:54:00:88:00:01, pci 0000:00:11.0), enp0s2 (mac 52:54:00:00:00:01, '
                      'pci 0000:00:02.0))']


def test_host_must_be_nic_info():
    with pytest.raises(AnsibleFilterError):
        nic_queues_errors([], {'irqs': []})
