# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Audit checks of an NVMe-oF initiator (hosts of the nvmeof_initiators group), on ``nvme_info``: every
connection of ``nvmeof_initiator_connections`` is a live controller, and every namespace of those connections
has the read-ahead the role sets (``nvmeof_initiator_read_ahead_sectors``).

The wanted values are the role's own: a connection as ``nvme_fabrics.check_connection`` normalises it (default
transport and port), a controller is that connection by ``nvme_fabrics.matches`` - the rule ``nvme_connect``
decides with whether to connect - and the read-ahead rule is ``blockdev_readahead``'s (a larger value is kept).
A fabric namespace of a connection the inventory does not list is not judged: the role sets nothing on it."""

from __future__ import annotations

from ansible_collections.inferops.node.plugins.module_utils.fabric import nvme_fabrics
from ansible_collections.inferops.node.plugins.module_utils.audit.check import Check, Missing, read, require_group
from ansible_collections.inferops.node.plugins.module_utils.storage.nvme_common import NvmeInputError

# What the checks compare with: the nvmeof_initiator role's connections and read-ahead.
FABRIC_VARIABLES = (
    'nvmeof_initiator_connections',
    'nvmeof_initiator_read_ahead_sectors',
)

__all__ = ['CHECKS', 'GROUP']

# The group playbooks/nvmeof_pool.yml runs the nvmeof_initiator role on (playbooks/vars/site_roles.yml).
GROUP = 'nvmeof_initiators'
ROLE = 'nvmeof_initiator'
FIX = 'role nvmeof_initiator (tag nvmeof_initiator)'
# A controller the kernel keeps reconnecting has nothing to fix on the initiator: the target or the path
# does not answer - a port lost from the target's running configuration is restored by its role.
FIX_CONNECTIONS = FIX + '; not live: the target or the path - role nvmeof_target (tag nvmeof_target) restores its ports'
VARIABLE = 'nvmeof_initiator_connections'


def _subject(conn):
    return '%s %s' % (conn['subnqn'], nvme_fabrics.describe(conn))


def _wanted(conn):
    """What a result shows as expected: the connection's identity, never its secrets."""
    return dict((key, conn[key]) for key in ('transport', 'traddr', 'trsvcid', 'subnqn'))


def _shown(ctrl):
    """``nvme1 rdma 10.77.0.10:4420 connecting`` - a controller as a result names it."""
    addr = ctrl.get('addr') or {}
    where = addr.get('traddr') or ctrl.get('address') or '?'
    if addr.get('trsvcid'):
        where += ':%s' % addr['trsvcid']
    return '%s %s %s %s' % (ctrl.get('name'), ctrl.get('transport'), where, ctrl.get('state'))


def _connections(check, expected, results):
    """``(state, conn)`` of every entry of nvmeof_initiator_connections the role accepts; a FAIL in ``results``
    for one it refuses (the preflight names it too): nothing on the host can be compared with it."""
    for index, item in enumerate(expected.get(VARIABLE) or []):
        subject = '%s[%d]' % (VARIABLE, index)
        if not isinstance(item, dict):
            results.append(check.fail(subject, 'a connection', None, '%s is not a dict' % subject))
            continue
        try:
            conn = nvme_fabrics.check_connection(item, subject + '.')
        except NvmeInputError as exc:
            results.append(check.fail(subject, 'a connection the role accepts', None, '%s (the preflight refuses it)' % exc.entry()))
            continue
        yield item.get('state') or 'present', conn


def _fabric_reads(reads, expected):
    """nvme_info's controllers and namespaces of an initiator with connections; ``Missing`` (SKIP) otherwise."""
    require_group(expected, GROUP, ROLE)
    if not expected.get(VARIABLE):
        raise Missing('%s is empty' % VARIABLE)
    return read(reads, 'nvme_info', 'controllers'), read(reads, 'nvme_info', 'namespaces')


def _reconnecting(ctrls):
    """Why controllers that match are not live: the kernel reconnects them by itself until ctrl_loss_tmo."""
    tmo = ctrls[0].get('ctrl_loss_tmo')
    return '%s, not live: the kernel keeps reconnecting (reconnect_delay %s s, %s)' % (
        ', '.join(_shown(c) for c in ctrls), ctrls[0].get('reconnect_delay'),
        'ctrl_loss_tmo off' if tmo == -1 else 'gives up after ctrl_loss_tmo %s s' % tmo)


@Check('fabric.connections', 'Every connection of nvmeof_initiator_connections a live controller (transport, address, '
       'port, subsystem NQN)', 'critical', '/sys/class/nvme/<ctrl>/{transport,address,subsysnqn,state}', FIX_CONNECTIONS, variables=FABRIC_VARIABLES)
def connections(check, reads, expected):
    ctrls, dummy = _fabric_reads(reads, expected)
    results = []
    for state, conn in _connections(check, expected, results):
        subject, wanted = _subject(conn), _wanted(conn)
        # Any state the kernel keeps a controller in (live, connecting, resetting, new): the role's own match.
        found = [c for c in ctrls if nvme_fabrics.matches(c, conn)]
        live = [c for c in found if c.get('state') == 'live']
        evidence = '/sys/class/nvme/%s/{transport,address,subsysnqn,state}' % (found[0]['name'] if found else '<ctrl>')
        if state == 'absent':
            if found:
                results.append(check.fail(subject, 'not connected (state absent)', [_shown(c) for c in found],
                                          'still connected: %s' % ', '.join(_shown(c) for c in found), evidence))
            else:
                results.append(check.passed(subject, 'not connected (state absent)', 'not connected', evidence=evidence))
        elif live:
            results.append(check.passed(subject, dict(wanted, state='live'), _shown(live[0]), evidence=evidence))
        elif found:
            # The target or the path does not answer now.
            results.append(check.fail(subject, dict(wanted, state='live'), [_shown(c) for c in found], _reconnecting(found),
                                      evidence))
        else:
            # What the host has of the subsystem instead (another transport, address or port), to say what differs.
            other = [_shown(c) for c in ctrls if c.get('subsysnqn') == conn['subnqn'] and c.get('cntrltype') != 'discovery']
            results.append(check.fail(subject, dict(wanted, state='live'), other or 'not connected', 'no controller for %s'
                                      % nvme_fabrics.describe(conn) + ('; the subsystem has: %s' % ', '.join(other) if other
                                                                       else '; the subsystem is not connected'), evidence))
    return results


@Check('fabric.read_ahead', 'Read-ahead of every namespace of nvmeof_initiator_connections at least what '
       'nvmeof_initiator sets', 'major', '/sys/block/<ns>/queue/read_ahead_kb',
       FIX + ' (blockdev_readahead, its udev rule and the re-trigger on NVME_EVENT=connected)', variables=FABRIC_VARIABLES)
def read_ahead(check, reads, expected):
    ctrls, namespaces = _fabric_reads(reads, expected)
    sectors = expected.get('nvmeof_initiator_read_ahead_sectors')
    if sectors is None:
        return [check.skip('nvmeof_initiator_read_ahead_sectors is null: the role leaves the read-ahead alone')]
    # blockdev --setra units (512-byte sectors), as the role's variable is given.
    wanted = int(sectors) // 2
    expect = '>= %d KiB (nvmeof_initiator_read_ahead_sectors %s)' % (wanted, sectors)
    results = []
    by_name = dict((c.get('name'), c) for c in ctrls)
    mine = set()
    for state, conn in _connections(check, expected, results):
        if state != 'present':
            continue
        heads = set()
        for ctrl in ctrls:
            if nvme_fabrics.matches(ctrl, conn):
                # nvme_info names each controller's namespace block devices, multipath heads included.
                heads.update(ctrl.get('namespaces') or [])
        if not heads:
            results.append(check.skip('no namespace of this connection (fabric.connections)', subject=_subject(conn),
                                      expected=expect))
        mine.update(heads)
    # A namespace reached over two connections (two paths of a subsystem) is one block device: one result.
    for ns in namespaces:
        if ns.get('name') not in mine:
            continue
        first = by_name.get((ns.get('controllers') or [None])[0]) or {}
        subject = '%s nsid %s (%s)' % (first.get('subsysnqn'), ns.get('nsid'), ns.get('name'))
        observed = (ns.get('queue') or {}).get('read_ahead_kb')
        evidence = '/sys/block/%s/queue/read_ahead_kb' % ns.get('name')
        if observed is None:
            results.append(check.skip('nvme_info read no read_ahead_kb of %s' % ns.get('name'), subject=subject,
                                      expected=expect))
        elif observed < wanted:
            results.append(check.fail(subject, expect, observed, '%s read-ahead %d KiB, the role sets %d KiB' % (
                ns.get('name'), observed, wanted), evidence))
        else:
            # blockdev_readahead never lowers a larger value (allow_decrease false), so the role keeps it too.
            results.append(check.passed(subject, expect, observed,
                                        None if observed == wanted else 'larger value kept, as the role does', evidence))
    return results


CHECKS = [connections, read_ahead]
