# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The field rules of module_utils/storage/nvme_common.py in both wordings: the modules' (option=value ...) and
the roles' (option = "value": reason, through NvmeInputError.entry and Refusals)."""

from __future__ import annotations

import pytest

from ansible_collections.inferops.node.plugins.module_utils.storage import nvme_common as common

# A valid DH-HMAC-CHAP secret, printed by `nvme gen-dhchap-key` on compute1.
SECRET = 'DHHC-1:00:Dr1pVHGMP7LGDIkHR0b0ucS0hPb4hen8HssCMPmjcP3SazVy:'
NQN_HINT = ('expected nqn.<yyyy-mm>.<reverse domain>:<name> (e.g. nqn.2026-09.internal.ai:models-pool-01, '
            'at most 223 bytes) or nqn.2014-08.org.nvmexpress:uuid:<uuid>')


def refusal(func, *args):
    with pytest.raises(common.NvmeInputError) as err:
        func(*args)
    return str(err.value), err.value.entry()


@pytest.mark.parametrize('func, args, module, role', [
    (common.check_nqn, ('nqn.2026-13.internal.ai:lab-pool', 'c[0].subnqn'),
     "c[0].subnqn='nqn.2026-13.internal.ai:lab-pool' is not an NQN: " + NQN_HINT,
     'c[0].subnqn = "nqn.2026-13.internal.ai:lab-pool": not an NQN: ' + NQN_HINT),
    (common.check_nqn, ('nqn.2026-09.internal.ai lab pool', 'subnqn'),
     "subnqn='nqn.2026-09.internal.ai lab pool' contains whitespace, a control character or a slash",
     'subnqn = "nqn.2026-09.internal.ai lab pool": not an NQN: it contains whitespace, a control character or a slash'),
    (common.check_nqn, ('nqn.2026-09.internal.ai:' + 'x' * 210, 'nqn'),
     "nqn='nqn.2026-09.internal.ai:%s' is longer than 223 bytes" % ('x' * 210),
     'nqn = "nqn.2026-09.internal.ai:%s": longer than 223 bytes' % ('x' * 210)),
    (common.check_nqn, ('nqn.2014-08.org.nvmexpress.discovery', 'nqn'),
     "nqn='nqn.2014-08.org.nvmexpress.discovery' is the discovery NQN, not an NVM subsystem or host NQN",
     'nqn = "nqn.2014-08.org.nvmexpress.discovery": the discovery NQN, not an NVM subsystem or host NQN'),
    (common.check_nqn, ('nqn.2014-08.org.nvmexpress:uuid:nope', 'hostnqn'),
     "hostnqn='nqn.2014-08.org.nvmexpress:uuid:nope': the part after nqn.2014-08.org.nvmexpress:uuid: is not a UUID",
     'hostnqn = "nqn.2014-08.org.nvmexpress:uuid:nope": not an NQN: the part after nqn.2014-08.org.nvmexpress:uuid: '
     'is not a UUID'),
    (common.check_nqn, ('nqn.1969-01.org.example:x', 'nqn'),
     "nqn='nqn.1969-01.org.example:x': the date 1969-01 is not a plausible domain registration date",
     'nqn = "nqn.1969-01.org.example:x": not an NQN: the date 1969-01 is not a plausible domain registration date'),
    (common.check_uuid, ('nope', 'hostid'),
     "hostid='nope' is not a UUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)",
     'hostid = "nope": not a UUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)'),
    (common.check_transport, ('udp', 'c[0].transport'),
     "c[0].transport='udp' is not one of tcp, rdma, fc", 'c[0].transport = "udp": not one of tcp, rdma, fc'),
    (common.check_traddr, ('tcp', '10.77.0.300', 'p[0].traddr'),
     "p[0].traddr='10.77.0.300' is not an IPv4 or IPv6 address (transport tcp)",
     'p[0].traddr = "10.77.0.300": not an IPv4 or IPv6 address (transport tcp)'),
    (common.check_traddr, ('tcp', '0.0.0.0', 'traddr'),
     "traddr='0.0.0.0' is not a unicast address", 'traddr = "0.0.0.0": not a unicast address'),
    (common.check_traddr, ('tcp', ' ', 'traddr'), "traddr=' ' is empty", 'traddr = " ": empty (an address is required)'),
    (common.check_traddr, ('fc', '10.77.0.10', 'traddr'),
     "traddr='10.77.0.10' is not an FC address (nn-0x<16 hex digits>:pn-0x<16 hex digits>)",
     'traddr = "10.77.0.10": not an FC address (nn-0x<16 hex digits>:pn-0x<16 hex digits>)'),
    (common.check_traddr, ('udp', '10.77.0.10', 'traddr'),
     "traddr: unknown transport 'udp'", 'traddr = "udp": not one of tcp, rdma, fc'),
    (common.check_svcid, (70000, 'c[0].trsvcid'),
     'c[0].trsvcid=70000 is out of range (1-65535)', 'c[0].trsvcid = 70000: out of range (1-65535)'),
    (common.check_svcid, ('http', 'trsvcid'), "trsvcid='http' is not a port number", 'trsvcid = "http": not a port number'),
    (common.check_svcid, (True, 'trsvcid'), 'trsvcid=True is not a port number', 'trsvcid = true: not a port number'),
    (common.check_range, (8, 'c[0].queue_size', 'queue_size'),
     'c[0].queue_size=8 is out of range (16-1024)', 'c[0].queue_size = 8: out of range (16-1024)'),
    (common.check_range, (-5, 'ctrl_loss_tmo', 'ctrl_loss_tmo'),
     'ctrl_loss_tmo=-5 is out of range (-1 (forever) or 0-2147483647)',
     'ctrl_loss_tmo = -5: out of range (-1 (forever) or 0-2147483647)'),
    (common.check_range, ('2', 'nsid', 'nsid'), "nsid='2' is not an integer", 'nsid = "2": not an integer'),
    (common.check_range, (0, 'ports[0].id', 'port_id'), 'ports[0].id=0 is out of range (1-65535)',
     'ports[0].id = 0: out of range (1-65535)'),
    (common.check_name, ('a b', 'c[0].name'),
     "c[0].name='a b': use letters, digits, \".\", \"_\" and \"-\" (at most 100)",
     'c[0].name = "a b": not a name: use letters, digits, ".", "_" and "-" (at most 100)'),
    (common.check_netdev, ('a/b', 'host_iface'), "host_iface='a/b' is not an interface name",
     'host_iface = "a/b": not an interface name'),
    (common.check_netdev, ('x' * 16, 'netdev'), "netdev='%s' is not an interface name" % ('x' * 16),
     'netdev = "%s": not an interface name' % ('x' * 16)),
    (common.check_abspath, ('srv/x', 'path'), "path='srv/x' is not an absolute path", 'path = "srv/x": not an absolute path'),
    (common.check_abspath, ('/', 'mounts[0].path', 'an absolute mount point'),
     "mounts[0].path='/' is not an absolute mount point", 'mounts[0].path = "/": not an absolute mount point'),
    (common.check_size, ('3Q', 'size'), "size='3Q' is not a size (e.g. 64M, 2G)", 'size = "3Q": not a size (e.g. 64M, 2G)'),
    (common.check_size, ('0', 'size'), "size='0' is not a size (e.g. 64M, 2G)", 'size = "0": not a size (e.g. 64M, 2G)'),
    (common.check_dhchap_pair, ('c[0].', 'dhchap', None, None, 'dhchap_secret', 'dhchap_ctrl_secret'),
     'c[0].auth=dhchap needs c[0].dhchap_secret (the host secret is missing)',
     'c[0].auth = "dhchap": dhchap_secret (the host secret) is missing'),
    (common.check_dhchap_pair, ('h.', 'none', None, SECRET, 'dhchap_key', 'dhchap_ctrl_key'),
     'h.dhchap_ctrl_key needs h.dhchap_key',
     'h.dhchap_ctrl_key: needs dhchap_key (bidirectional authentication needs the host secret)'),
])
def test_each_rule_words_its_refusal_for_modules_and_roles(func, args, module, role):
    assert refusal(func, *args) == (module, role)


@pytest.mark.parametrize('value, reason', [
    ('secret', 'not a DH-HMAC-CHAP secret: expected DHHC-1:<00|01|02|03>:<base64>: (see nvme gen-dhchap-key)'),
    ('DHHC-1:00:bm90LWEta2V5:', 'not a DH-HMAC-CHAP secret: the key is 5 bytes; expected 32, 48 or 64 bytes plus a 4-byte CRC'),
    (SECRET[:12] + ('A' if SECRET[12] != 'A' else 'B') + SECRET[13:],
     'not a DH-HMAC-CHAP secret: the CRC-32 of the key does not match (mistyped secret?)'),
    (42, 'not a string'),
])
def test_secrets_are_never_repeated(value, reason):
    module, role = refusal(common.check_dhchap_secret, value, 'c[0].dhchap_secret')
    assert role == 'c[0].dhchap_secret: ' + reason
    assert module.startswith('c[0].dhchap_secret')
    if isinstance(value, str) and value.startswith('DHHC-1'):
        assert value not in module + role


def test_valid_values_come_back_normalised():
    assert common.check_nqn('nqn.2026-09.internal.ai:lab-pool', 'n') == 'nqn.2026-09.internal.ai:lab-pool'
    assert common.check_nqn(common.DISCOVERY_NQN, 'n', allow_discovery=True) == common.DISCOVERY_NQN
    assert common.check_uuid('0BADC0DE-0000-4000-8000-000000000001', 'u') == '0badc0de-0000-4000-8000-000000000001'
    assert common.check_traddr('rdma', ' fe80:0:0::1 ', 't') == 'fe80::1'
    assert common.check_svcid('4420', 's') == 4420
    assert common.check_range(None, 'x', 'nsid') is None
    assert common.check_range(-1, 'x', 'ctrl_loss_tmo') == -1
    assert common.check_size('64M', 's') == 64 << 20 and common.check_size('512', 's') == 512
    assert common.check_dhchap_secret(' %s ' % SECRET, 's') == SECRET
    assert common.check_dhchap_pair('c.', 'dhchap', SECRET, None, 'dhchap_secret', 'dhchap_ctrl_secret') is None


def test_refusals_collect_every_problem_and_return_the_good_values():
    refusals = common.Refusals()
    assert refusals.check(common.check_svcid, 0, 'a.trsvcid') is None
    assert refusals.check(common.check_svcid, 4420, 'b.trsvcid') == 4420
    assert refusals.check(common.check_uuid, 'x', 'c.hostid') is None
    assert refusals == ['a.trsvcid = 0: out of range (1-65535)',
                        'c.hostid = "x": not a UUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)']


def test_a_plain_refusal_is_worded_as_it_is():
    assert common.NvmeInputError('c[0] and c[1] are the same connection').entry() == 'c[0] and c[1] are the same connection'
