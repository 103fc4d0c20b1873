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

Paths go through ``module_utils.sysfs.host_path`` so unit tests can run on a fake tree.
"""

from __future__ import annotations

import errno
import os

from ansible_collections.inferops.node.plugins.module_utils import sysfs

__all__ = ['ROOT', 'read_state', 'Configfs', 'NvmetError', 'HOST_AUTH_ATTRS', 'SUBSYS_ATTRS', 'allowed_hosts_errors']

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
        namespaces = []
        for nsid in sysfs.listdir(base + '/namespaces'):
            nsbase = '%s/namespaces/%s' % (base, nsid)
            device = {}
            for attr in NS_DEVICE_ATTRS:
                value = _read('%s/device_%s' % (nsbase, attr))
                device[attr] = None if value in (None, '(null)') else value
            entry = {'nsid': int(nsid), 'enable': int(_read(nsbase + '/enable') or 0), 'device': device}
            for attr in ('ana_grpid', 'buffered_io'):
                value = _read('%s/%s' % (nsbase, attr))
                if value is not None and value.isdigit():
                    entry[attr] = int(value)
            namespaces.append(entry)
        namespaces.sort(key=lambda ns: ns['nsid'])
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
        base = '%s/ports/%s' % (ROOT, portid)
        addr = {}
        for attr in PORT_ADDR_ATTRS:
            addr[attr] = _read('%s/addr_%s' % (base, attr)) or ''
        param = {}
        value = _read(base + '/param_inline_data_size')
        if value is not None:
            param['inline_data_size'] = value
        ports.append({
            'portid': int(portid),
            'addr': addr,
            'param': param,
            'referrals': sysfs.listdir(base + '/referrals'),
            'subsystems': sysfs.listdir(base + '/subsystems'),
        })
    state['ports'] = sorted(ports, key=lambda p: p['portid'])
    return state


class Configfs(object):
    """Changes to the nvmet tree; ``dry`` only records them (check mode)."""

    def __init__(self, dry):
        self.dry = dry
        self.log = []

    def _fail(self, what, exc):
        raise NvmetError('%s: %s' % (what, os.strerror(exc.errno) if getattr(exc, 'errno', None) else exc))

    def mkdir(self, rel):
        self.log.append('mkdir %s' % rel)
        if self.dry:
            return
        try:
            os.mkdir(sysfs.host_path('%s/%s' % (ROOT, rel)))
        except OSError as exc:
            if exc.errno != errno.EEXIST:
                self._fail('mkdir %s/%s' % (ROOT, rel), exc)

    def rmdir(self, rel):
        self.log.append('rmdir %s' % rel)
        if self.dry:
            return
        try:
            os.rmdir(sysfs.host_path('%s/%s' % (ROOT, rel)))
        except OSError as exc:
            if exc.errno != errno.ENOENT:
                self._fail('rmdir %s/%s' % (ROOT, rel), exc)

    def link(self, target_rel, link_rel):
        self.log.append('link %s -> %s' % (link_rel, target_rel))
        if self.dry:
            return
        try:
            os.symlink(sysfs.host_path('%s/%s' % (ROOT, target_rel)), sysfs.host_path('%s/%s' % (ROOT, link_rel)))
        except OSError as exc:
            if exc.errno != errno.EEXIST:
                self._fail('linking %s/%s into %s/%s' % (ROOT, target_rel, ROOT, link_rel), exc)

    def unlink(self, rel):
        self.log.append('unlink %s' % rel)
        if self.dry:
            return
        try:
            os.unlink(sysfs.host_path('%s/%s' % (ROOT, rel)))
        except OSError as exc:
            if exc.errno != errno.ENOENT:
                self._fail('unlink %s/%s' % (ROOT, rel), exc)

    def write(self, rel, value, secret=False):
        self.log.append('write %s = %s' % (rel, '********' if secret else value))
        if self.dry:
            return
        try:
            sysfs.write_attr('%s/%s' % (ROOT, rel), value)
        except sysfs.SysfsWriteError as exc:
            what = 'writing %s to %s/%s' % ('********' if secret else repr(value), ROOT, rel)
            # The exception's own text holds the value: never show a secret.
            reason = os.strerror(exc.errno) if isinstance(exc.errno, int) else 'write failed'
            raise NvmetError('%s: %s' % (what, reason))
