# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kernel NVMe target (nvmet) configuration through configfs.

``read_state()`` returns the whole of ``/sys/kernel/config/nvmet`` in the shape of
nvmetcli's saved configuration (``hosts``, ``ports``, ``subsystems``), so the file the
module saves can also be read by nvmetcli and by the boot-time restore helper of the
``nvmeof_target`` role. ``Configfs`` performs the changes - mkdir, rmdir, symlinks and
attribute writes (through ``module_utils.sysfs``, so errors such as EACCES for an
enabled port surface) - and records a readable line for each.

``allowed_hosts_errors()`` is the rule for a subsystem's allowed hosts that both the
``nvmet_subsystem`` module and the ``nvmeof_target`` role (through the
``inferops.node.nvmet_allowed_hosts_errors`` filter, on the controller) apply: an empty
list is refused unless the subsystem opts in with ``allow_no_hosts`` (or lets any host
in with ``allow_any_host``).

``target_errors()``, ``target_ports()`` and ``target_subsystems()`` are the ``nvmeof_target``
role's input rules and what it hands the module (through the filters of
``plugins/filter/nvmet.py``), with the field rules of ``module_utils/storage/nvme_common.py``.

Paths go through ``module_utils.sysfs.host_path`` so unit tests can run on a fake tree. The
imports are relative: the role's boot-time restore helper imports this file and its siblings from
its zip application (``/usr/local/lib/inferops-nvmet-restore.pyz``), outside Ansible.
"""

from __future__ import annotations

import errno
import json
import os

# Relative imports: this file ships in the boot packages (common/boot_package.py), run with python3 -ES outside
# Ansible as the package inferops: only the standard library and other module_utils files, imported relatively.
from ..storage import nvme_common as common
from ..common import sysfs

__all__ = ['ROOT', 'read_state', 'Configfs', 'NvmetError', 'HOST_AUTH_ATTRS', 'SUBSYS_ATTRS', 'allowed_hosts_errors',
           'target_errors', 'target_ports', 'target_subsystems', 'IDENTITY_HINT', 'nguid_equal', 'write_namespace',
           'write_port']

ROOT = '/sys/kernel/config/nvmet'
HOST_AUTH_ATTRS = ('dhchap_key', 'dhchap_ctrl_key', 'dhchap_hash', 'dhchap_dhgroup')
SUBSYS_ATTRS = ('allow_any_host', 'serial', 'model', 'version', 'cntlid_min', 'cntlid_max', 'qid_max', 'pi_enable')
PORT_ADDR_ATTRS = ('trtype', 'adrfam', 'traddr', 'trsvcid', 'treq')
NS_DEVICE_ATTRS = ('path', 'uuid', 'nguid')


class NvmetError(Exception):
    pass


def allowed_hosts_errors(variable, index, nqn, hosts, allow_any_host=False, allow_no_hosts=False, removed=(), entries=0):
    """What is wrong with the allowed hosts of present subsystem ``variable[index]`` (a list, empty when fine).

    ``hosts`` is the complete list the subsystem would end up with (only its length counts);
    ``allow_any_host`` and ``allow_no_hosts`` are booleans already; ``removed`` names the hosts
    the subsystem allows now and would lose, and ``entries`` how many entries resolved to
    ``hosts`` (a role's inventory group may have no host), for the message only. An empty list makes the
    kernel refuse every host - hosts connected now keep their connection until it drops, then
    their reconnect is refused - so it is only accepted with ``allow_no_hosts``.
    """
    where = '%s[%d]' % (variable, index)
    errors = []
    if allow_no_hosts and allow_any_host:
        errors.append('%s (nqn = "%s"): allow_no_hosts = true and allow_any_host = true are exclusive; set %s.allow_no_hosts = false '
                      'to let any host connect, or %s.allow_any_host = false if no host may connect' % (where, nqn, where, where))
    elif allow_no_hosts and max(entries, len(hosts)) > 0:
        errors.append('%s (nqn = "%s"): allow_no_hosts = true and allowed_hosts are exclusive; empty %s.allowed_hosts if no host '
                      'may connect, or set %s.allow_no_hosts = false' % (where, nqn, where, where))
    elif not allow_no_hosts and not allow_any_host and len(hosts) == 0:
        what = 'allowed_hosts resolves to no host (its groups have none)' if entries else 'allowed_hosts is empty'
        if removed:
            what += ' (it would remove the last allowed host%s, %s)' % ('s' if len(removed) > 1 else '', ', '.join(sorted(removed)))
        errors.append('%s (nqn = "%s"): %s, so the target would refuse every host (a connected host at its next reconnect); '
                      'list the hosts allowed to connect in %s.allowed_hosts, or set %s.allow_no_hosts = true if no host '
                      'may connect' % (where, nqn, what, where, where))
    return errors


def _read(path):
    value = sysfs.read_attr(path)
    if value is None:
        return None
    return value.strip()


def available():
    """Whether nvmet's configfs tree is there (module loaded, configfs mounted)."""
    return sysfs.isdir(ROOT)


def read_state():
    """The nvmet configuration, nvmetcli-style: {'hosts': [...], 'ports': [...], 'subsystems': [...]}."""
    state = {'hosts': [], 'ports': [], 'subsystems': []}
    if not available():
        return state
    for nqn in sysfs.listdir(ROOT + '/hosts'):
        host = {'nqn': nqn}
        for attr in HOST_AUTH_ATTRS:
            value = _read('%s/hosts/%s/%s' % (ROOT, nqn, attr))
            if value not in (None, '', '(null)'):
                host[attr] = value
        state['hosts'].append(host)
    for name in sysfs.listdir(ROOT + '/subsystems'):
        base = '%s/subsystems/%s' % (ROOT, name)
        attrs = {}
        for attr in SUBSYS_ATTRS:
            value = _read('%s/attr_%s' % (base, attr))
            if value is not None:
                attrs[attr] = value
        namespaces = sorted((read_namespace(name, int(nsid)) for nsid in sysfs.listdir(base + '/namespaces')),
                            key=lambda ns: ns['nsid'])
        state['subsystems'].append({
            'nqn': name,
            'attr': attrs,
            'allowed_hosts': sysfs.listdir(base + '/allowed_hosts'),
            'namespaces': namespaces,
        })
    ports = []
    for portid in sysfs.listdir(ROOT + '/ports'):
        if not portid.isdigit():
            continue
        ports.append(read_port(int(portid)))
    state['ports'] = sorted(ports, key=lambda p: p['portid'])
    return state


# read_state's entries, one at a time: the nvmet_subsystem module reads them all, the boot helper
# (inferops_nvmet_restore.py) the one it is about to complete.

def read_namespace(nqn, nsid):
    """Namespace ``nsid`` of subsystem ``nqn``: ``{nsid, enable, device: {path, uuid, nguid}}`` and, where the
    kernel has them, ana_grpid and buffered_io; the kernel's ``(null)`` reads as None."""
    nsbase = '%s/subsystems/%s/namespaces/%d' % (ROOT, nqn, nsid)
    device = {}
    for attr in NS_DEVICE_ATTRS:
        value = _read('%s/device_%s' % (nsbase, attr))
        device[attr] = None if value in (None, '(null)') else value
    entry = {'nsid': nsid, 'enable': int(_read(nsbase + '/enable') or 0), 'device': device}
    for attr in ('ana_grpid', 'buffered_io'):
        value = _read('%s/%s' % (nsbase, attr))
        if value is not None and value.isdigit():
            entry[attr] = int(value)
    return entry


def read_port(portid):
    """Port ``portid``: ``{portid, addr (every attribute, '' when unset), param, referrals, subsystems}``."""
    base = '%s/ports/%d' % (ROOT, portid)
    param = {}
    value = _read(base + '/param_inline_data_size')
    if value is not None:
        param['inline_data_size'] = value
    return {
        'portid': portid,
        'addr': dict((attr, _read('%s/addr_%s' % (base, attr)) or '') for attr in PORT_ADDR_ATTRS),
        'param': param,
        'referrals': sysfs.listdir(base + '/referrals'),
        'subsystems': sysfs.listdir(base + '/subsystems'),
    }


class Configfs(object):
    """Changes to the nvmet tree; ``dry`` only records them (check mode).

    ``log`` lists the changes made (or, dry, planned): an operation the kernel
    refused is not in it, so a retried port is counted once, when it listens.
    """

    def __init__(self, dry):
        self.dry = dry
        self.log = []

    def _apply(self, entry, action, ignored_errno, what):
        if not self.dry:
            try:
                action()
            except OSError as exc:
                if exc.errno != ignored_errno:
                    raise NvmetError('%s: %s' % (what, os.strerror(exc.errno) if exc.errno else exc))
        self.log.append(entry)

    def mkdir(self, rel):
        path = sysfs.host_path('%s/%s' % (ROOT, rel))
        self._apply('mkdir %s' % rel, lambda: os.mkdir(path), errno.EEXIST, 'mkdir %s/%s' % (ROOT, rel))

    def rmdir(self, rel):
        path = sysfs.host_path('%s/%s' % (ROOT, rel))
        self._apply('rmdir %s' % rel, lambda: os.rmdir(path), errno.ENOENT, 'rmdir %s/%s' % (ROOT, rel))

    def link(self, target_rel, link_rel):
        source = sysfs.host_path('%s/%s' % (ROOT, target_rel))
        path = sysfs.host_path('%s/%s' % (ROOT, link_rel))
        self._apply('link %s -> %s' % (link_rel, target_rel), lambda: os.symlink(source, path), errno.EEXIST,
                    'linking %s/%s into %s/%s' % (ROOT, target_rel, ROOT, link_rel))

    def unlink(self, rel):
        path = sysfs.host_path('%s/%s' % (ROOT, rel))
        self._apply('unlink %s' % rel, lambda: os.unlink(path), errno.ENOENT, 'unlink %s/%s' % (ROOT, rel))

    def write(self, rel, value, secret=False):
        if not self.dry:
            try:
                sysfs.write_attr('%s/%s' % (ROOT, rel), value)
            except sysfs.SysfsWriteError as exc:
                what = 'writing %s to %s/%s' % ('********' if secret else repr(value), ROOT, rel)
                # The exception's own text holds the value: never show a secret.
                reason = os.strerror(exc.errno) if isinstance(exc.errno, int) else 'write failed'
                raise NvmetError('%s: %s' % (what, reason))
        self.log.append('write %s = %s' % (rel, '********' if secret else value))


# ------------------------------------------------------------------ writes shared with the boot helper
# The nvmet_subsystem module (apply) and the role's boot-time restore helper (inferops_nvmet_restore.py)
# write namespaces and ports through these, each from a namespace or port as it is now.

ZERO_UUID = '00000000-0000-0000-0000-000000000000'


def nguid_equal(a, b):
    """NGUIDs compared as the kernel shows them: unset, empty and all zeros are the same."""
    zero = (None, '', ZERO_UUID)
    if a in zero and b in zero:
        return True
    return (a or '').lower() == (b or '').lower()


def write_namespace(cfs, nsbase, want, before):
    """Make namespace ``nsbase`` (relative to ROOT) what ``want`` says - ``{path, uuid, nguid, enable}``, a null
    uuid or nguid leaving the namespace's own - from ``before`` (the same keys, as it is now). The kernel refuses
    identity writes on an enabled namespace: it is disabled first and enabled again after them."""
    identity = []
    if want['path'] and want['path'] != before.get('path'):
        identity.append(('device_path', want['path']))
    if want.get('uuid') and want['uuid'].lower() != (before.get('uuid') or '').lower():
        identity.append(('device_uuid', want['uuid']))
    if want.get('nguid') and not nguid_equal(want['nguid'], before.get('nguid')):
        identity.append(('device_nguid', want['nguid']))
    enabled = before.get('enable') or 0
    if identity and enabled:
        cfs.write(nsbase + '/enable', 0)
        enabled = 0
    for attr, value in identity:
        cfs.write('%s/%s' % (nsbase, attr), value)
    if enabled != want['enable']:
        cfs.write(nsbase + '/enable', want['enable'])


def write_port(cfs, portid, addr, param, before_addr, before_param, linked, unlink=True):
    """Give port ``portid`` the address ``addr`` and parameters ``param`` from the ones it has now; return the
    subsystems still linked to it. The kernel refuses address and parameter writes on an enabled port (one with
    a subsystem linked, EACCES): with ``unlink`` the links go first (the caller links again); without (the boot
    helper, which only adds) a different address is an NvmetError and the parameters of an enabled port stay."""
    changes = [(key, addr[key]) for key in PORT_ADDR_ATTRS if addr.get(key) and addr[key] != before_addr.get(key)]
    if changes and linked:
        if not unlink:
            raise NvmetError('port %d is enabled with another address (%s)' % (portid, ', '.join(k for k, v in changes)))
        for nqn in sorted(linked):
            cfs.unlink('ports/%d/subsystems/%s' % (portid, nqn))
        linked = set()
    for key, value in changes:
        cfs.write('ports/%d/addr_%s' % (portid, key), value)
    if not linked or unlink:
        for key, value in sorted(param.items()):
            if value != before_param.get(key):
                cfs.write('ports/%d/param_%s' % (portid, key), value)
    return set(linked)


# ------------------------------------------------------------------ the role's input

IDENTITY_HINT = 'run the identity tasks of inferops.node.nvmeof_initiator on %s first, as playbooks/nvmeof_pool.yml does'


def _given(entry):
    return [key for key in ('nqn', 'host', 'group') if entry.get(key) is not None]


def _resolve(entry, identities, groups):
    """The host NQNs an allowed_hosts entry stands for (a group's hosts with a known identity)."""
    if entry.get('nqn') is not None:
        return [entry['nqn']]
    if entry.get('host') is not None:
        return [identities[entry['host']]['hostnqn']] if entry['host'] in identities else []
    return [identities[name]['hostnqn'] for name in groups.get(entry.get('group'), []) if name in identities]


def target_errors(ports, subsystems, identities=None, groups=None, settings=None, prefix='nvmeof_target_'):
    """Every refusal of a target's input (a list of messages, empty when fine).

    ``identities`` maps inventory hosts to their ``{hostnqn, hostid}`` (the initiators' identity
    fact), ``groups`` inventory groups to their hosts; ``settings`` holds ``soft_roce_netdev``,
    ``restore_timeout`` and ``state_file`` (the role's variables without ``prefix``).
    """
    identities = identities or {}
    groups = groups or {}
    settings = settings or {}
    refusals = common.Refusals()
    ids = set()
    present = set()
    listeners = {}
    for index, port in enumerate(ports or []):
        where = '%sports[%d]' % (prefix, index)
        pid = refusals.check(common.check_range, port.get('id'), where + '.id', 'port_id')
        if pid is not None and pid in ids:
            refusals.append('%s.id = %s: listed twice' % (where, json.dumps(pid)))
        ids.add(pid)
        if (port.get('state') or 'present') != 'present':
            continue
        present.add(pid)
        transport = refusals.check(common.check_transport, port.get('transport') or 'tcp', where + '.transport')
        svcid = port.get('trsvcid')
        svcid = 4420 if svcid is None else svcid
        if port.get('traddr') is None:
            refusals.append('%s.traddr is required for a present port' % where)
            traddr = None
        else:
            traddr = refusals.check(common.check_traddr, transport, str(port['traddr']), where + '.traddr') if transport else None
        if transport != 'fc':
            svcid = refusals.check(common.check_svcid, svcid, where + '.trsvcid')
        if transport and traddr:
            key = '%s %s %s' % (transport, traddr, svcid)
            if key in listeners:
                refusals.append('%s: %s already listens on %s' % (where, listeners[key], key))
            listeners.setdefault(key, where)
    nqns = set()
    for index, sub in enumerate(subsystems or []):
        where = '%ssubsystems[%d]' % (prefix, index)
        nqn = refusals.check(common.check_nqn, sub.get('nqn'), where + '.nqn')
        if nqn is not None and nqn in nqns:
            refusals.append('%s.nqn = %s: listed twice' % (where, json.dumps(nqn)))
        nqns.add(nqn)
        if (sub.get('state') or 'present') != 'present':
            continue
        nsids = set()
        for nindex, ns in enumerate(sub.get('namespaces') or []):
            nwhere = '%s.namespaces[%d]' % (where, nindex)
            nsid = refusals.check(common.check_range, ns.get('nsid'), nwhere + '.nsid', 'nsid')
            if nsid is not None and nsid in nsids:
                refusals.append('%s.nsid = %s: listed twice' % (nwhere, json.dumps(nsid)))
            nsids.add(nsid)
            refusals.check(common.check_abspath, ns.get('path'), nwhere + '.path')
            if ns.get('size'):
                refusals.check(common.check_size, ns['size'], nwhere + '.size')
            for key in ('uuid', 'nguid'):
                if ns.get(key):
                    refusals.check(common.check_uuid, ns[key], '%s.%s' % (nwhere, key))
        entries = sub.get('allowed_hosts') or []
        allow_any = bool(sub.get('allow_any_host'))
        if allow_any and entries:
            refusals.append('%s: allow_any_host = true and allowed_hosts are exclusive (the kernel refuses both)' % where)
        else:
            # An entry that does not resolve counts as one host (its own refusal names it).
            resolved = []
            for entry in entries:
                if _given(entry) == ['group'] and entry['group'] in groups:
                    resolved += groups[entry['group']]
                else:
                    resolved.append(entry)
            refusals.extend(allowed_hosts_errors(prefix + 'subsystems', index, sub.get('nqn'), resolved, allow_any_host=allow_any,
                                                 allow_no_hosts=bool(sub.get('allow_no_hosts')), entries=len(entries)))
        for hindex, entry in enumerate(entries):
            hwhere = '%s.allowed_hosts[%d]' % (where, hindex)
            given = _given(entry)
            if len(given) != 1:
                refusals.append('%s = %s: give exactly one of nqn, host, group' % (hwhere, json.dumps(entry, sort_keys=True, default=str)))
            elif given[0] == 'nqn':
                refusals.check(common.check_nqn, entry['nqn'], hwhere + '.nqn')
            elif given[0] == 'host' and entry['host'] not in identities:
                refusals.append('%s.host = %s: not an inventory host whose host NQN is known (%s)' % (
                    hwhere, json.dumps(entry['host']), IDENTITY_HINT % 'it'))
            elif given[0] == 'group' and entry['group'] not in groups:
                refusals.append('%s.group = %s: no such inventory group' % (hwhere, json.dumps(entry['group'])))
            elif given[0] == 'group':
                unknown = [name for name in groups[entry['group']] if name not in identities]
                if unknown:
                    refusals.append('%s.group = %s: host NQN unknown for %s (%s)' % (
                        hwhere, json.dumps(entry['group']), ', '.join(unknown), IDENTITY_HINT % 'them'))
            secret, ctrl_secret = entry.get('dhchap_key'), entry.get('dhchap_ctrl_key')
            refusals.check(common.check_dhchap_pair, hwhere + '.', entry.get('auth') or 'none', secret, ctrl_secret,
                           'dhchap_key', 'dhchap_ctrl_key')
            for key in ('dhchap_key', 'dhchap_ctrl_key'):
                if entry.get(key):
                    refusals.check(common.check_dhchap_secret, entry[key], '%s.%s' % (hwhere, key))
        for pid in sub.get('ports') or []:
            if pid not in present:
                refusals.append('%s.ports lists %s, which is not a present port of %sports' % (where, json.dumps(pid), prefix))
    if settings.get('soft_roce_netdev') is not None:
        refusals.check(common.check_netdev, str(settings['soft_roce_netdev']), prefix + 'soft_roce_netdev')
    if settings.get('restore_timeout') is not None:
        refusals.check(common.check_range, settings['restore_timeout'], prefix + 'restore_timeout', 'restore_timeout')
    if settings.get('state_file') is not None:
        refusals.check(common.check_abspath, settings['state_file'], prefix + 'state_file')
    return list(refusals)


def target_ports(ports):
    """The role's ports as ``nvmet_subsystem`` takes them (defaults filled in)."""
    result = []
    for port in ports or []:
        if (port.get('state') or 'present') == 'absent':
            result.append({'id': port['id'], 'state': 'absent'})
        else:
            result.append({'id': port['id'], 'state': 'present', 'transport': port.get('transport') or 'tcp',
                           'traddr': port['traddr'], 'trsvcid': 4420 if port.get('trsvcid') is None else port['trsvcid']})
    return result


def target_subsystems(subsystems, identities=None, groups=None):
    """The role's subsystems as ``nvmet_subsystem`` takes them: allowed_hosts entries naming an
    inventory host or group become the host NQNs those initiators reported (after ``target_errors``)."""
    identities = identities or {}
    groups = groups or {}
    result = []
    for sub in subsystems or []:
        if (sub.get('state') or 'present') == 'absent':
            result.append({'nqn': sub['nqn'], 'state': 'absent'})
            continue
        hosts = []
        seen = set()
        for entry in sub.get('allowed_hosts') or []:
            for name in _resolve(entry, identities, groups):
                if name in seen:
                    continue
                seen.add(name)
                host = {'nqn': name, 'auth': entry.get('auth') or 'none'}
                for key in ('dhchap_key', 'dhchap_ctrl_key'):
                    if entry.get(key):
                        host[key] = entry[key]
                hosts.append(host)
        item = {'nqn': sub['nqn'], 'state': 'present', 'allow_any_host': bool(sub.get('allow_any_host')),
                'allow_no_hosts': bool(sub.get('allow_no_hosts')), 'allowed_hosts': hosts,
                'namespaces': sub.get('namespaces') or [], 'ports': sub.get('ports') or []}
        for key in ('serial', 'model'):
            if sub.get(key):
                item[key] = sub[key]
        result.append(item)
    return result
