# -*- coding: utf-8 -*-
# Managed by inferops.node.nvmeof_target - changes are overwritten.
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Restore the kernel NVMe target configuration at boot.

Reads the file saved by inferops.node.nvmet_subsystem (nvmetcli's JSON format:
hosts, ports, subsystems) and creates what is missing under /sys/kernel/config/nvmet.
It never removes anything, so running it on a configured target changes nothing.

Namespaces whose backing device has not appeared yet and ports that cannot listen
yet (address not configured, RDMA device not created) are retried every second
until --timeout; whatever still fails is printed and the exit status is 1.

The configfs changes are the collection's plugins/module_utils/fabric/nvmet.py - the code of
the inferops.node.nvmet_subsystem module: its namespace and port writes (write_namespace,
write_port, without unlinking) and its Configfs - installed with its siblings as the package
inferops inside /usr/local/lib/inferops-nvmet-restore.pyz, whose __main__.py this script
is (inferops.node.boot_package; run through the wrapper /usr/local/sbin/inferops-nvmet-restore,
python3 -ES). Commands run in the C locale (``command.C_LOCALE``).

Usage: inferops-nvmet-restore [--timeout SECONDS] [--root DIR] [FILE]
"""

import argparse
import json
import os
import subprocess
import sys
import time

# The package inferops is in the same zip application as this script (inferops.node.boot_package).
try:
    from inferops.common import command, sysfs
    from inferops.fabric import nvmet
except ImportError:  # unit tests: the collection itself
    from ansible_collections.inferops.node.plugins.module_utils.common import command, sysfs
    from ansible_collections.inferops.node.plugins.module_utils.fabric import nvmet

DEFAULT_FILE = '/etc/nvmet/inferops-nvmet.json'
TRANSPORT_MODULES = {'tcp': 'nvmet-tcp', 'rdma': 'nvmet-rdma', 'fc': 'nvmet-fc', 'loop': 'nvme-loop'}
SECRET_ATTRS = ('dhchap_key', 'dhchap_ctrl_key')


class Restorer(object):
    """Only what is missing or different, through nvmet.Configfs (whose log is then the changes made)."""

    def __init__(self):
        self.cfs = nvmet.Configfs(dry=False)

    @property
    def done(self):
        return self.cfs.log

    @staticmethod
    def read(rel):
        value = sysfs.read_attr('%s/%s' % (nvmet.ROOT, rel))
        return None if value is None else value.strip()

    def mkdir(self, rel):
        if not sysfs.isdir('%s/%s' % (nvmet.ROOT, rel)):
            self.cfs.mkdir(rel)

    def link(self, target, rel):
        if not os.path.lexists(sysfs.host_path('%s/%s' % (nvmet.ROOT, rel))):
            self.cfs.link(target, rel)

    def set_attr(self, rel, value, secret=False):
        if value is not None and self.read(rel) != str(value):
            self.cfs.write(rel, value, secret=secret)


def modprobe(names):
    for name in names:
        subprocess.call(['modprobe', name], env=dict(os.environ, **command.C_LOCALE))


def restore_static(res, config, errors):
    """Hosts, subsystems, allowed hosts: no retries needed."""
    res.mkdir('hosts')
    for host in config.get('hosts', []):
        base = 'hosts/%s' % host['nqn']
        try:
            res.mkdir(base)
            for attr in nvmet.HOST_AUTH_ATTRS:
                if host.get(attr):
                    res.set_attr('%s/%s' % (base, attr), host[attr], secret=attr in SECRET_ATTRS)
        except nvmet.NvmetError as exc:
            errors.append('host %s: %s' % (host['nqn'], exc))
    for sub in config.get('subsystems', []):
        base = 'subsystems/%s' % sub['nqn']
        try:
            res.mkdir(base)
            for hnqn in sub.get('allowed_hosts', []):
                res.link('hosts/%s' % hnqn, '%s/allowed_hosts/%s' % (base, hnqn))
        except nvmet.NvmetError as exc:
            errors.append('subsystem %s: %s' % (sub['nqn'], exc))
            continue
        for attr in nvmet.SUBSYS_ATTRS:
            value = sub.get('attr', {}).get(attr)
            if value is None:
                continue
            try:
                res.set_attr('%s/attr_%s' % (base, attr), value)
            except nvmet.NvmetError as exc:
                # A fixed attribute (version, cntlid range) is not worth failing the boot for.
                print('subsystem %s: attr_%s=%s not restored: %s' % (sub['nqn'], attr, value, exc), file=sys.stderr)


def device_exists(path):
    return sysfs.exists(path)


def restore_namespace(res, nqn, ns):
    """A namespace already enabled is left as it is (the helper only adds); one not yet enabled gets its saved
    identity and is enabled once its backing device exists."""
    base = 'subsystems/%s/namespaces/%d' % (nqn, ns['nsid'])
    res.mkdir(base)
    now = nvmet.read_namespace(nqn, ns['nsid'])
    if now['enable']:
        return
    device = ns.get('device', {})
    path = device.get('path')
    if path and not device_exists(path):
        raise nvmet.NvmetError('backing device %s does not exist (yet)' % path)
    want = {'path': path, 'uuid': device.get('uuid'), 'nguid': device.get('nguid'), 'enable': int(ns.get('enable', 1))}
    nvmet.write_namespace(res.cfs, base, want, dict(now['device'], enable=0))


def restore_port(res, port):
    """Address and parameters of a port not yet enabled, then its links; an enabled port with another address is
    an error (unlinking it would cut the hosts it serves)."""
    base = 'ports/%d' % port['portid']
    res.mkdir(base)
    now = nvmet.read_port(port['portid'])
    nvmet.write_port(res.cfs, port['portid'], port.get('addr', {}), port.get('param', {}), now['addr'], now['param'],
                     now['subsystems'], unlink=False)
    for nqn in port.get('subsystems', []):
        res.link('subsystems/%s' % nqn, '%s/subsystems/%s' % (base, nqn))


def restore(config, timeout, sleep=time.sleep, clock=time.monotonic):
    """Apply ``config``; return (list of changes, list of errors)."""
    res = Restorer()
    errors = []
    restore_static(res, config, errors)
    pending = []
    for sub in config.get('subsystems', []):
        for ns in sub.get('namespaces', []):
            pending.append(('namespace %d of %s' % (ns['nsid'], sub['nqn']), lambda s=sub, n=ns: restore_namespace(res, s['nqn'], n)))
    for port in config.get('ports', []):
        addr = port.get('addr', {})
        name = 'port %d (%s %s:%s)' % (port['portid'], addr.get('trtype'), addr.get('traddr'), addr.get('trsvcid'))
        pending.append((name, lambda p=port: restore_port(res, p)))
    deadline = clock() + timeout
    last = {}
    while pending:
        waiting = []
        for name, func in pending:
            try:
                func()
            except nvmet.NvmetError as exc:
                last[name] = str(exc)
                waiting.append((name, func))
        pending = waiting
        if not pending or clock() >= deadline:
            break
        sleep(1)
    for name, dummy in pending:
        errors.append('%s: %s' % (name, last.get(name)))
    return res.done, errors


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('file', nargs='?', default=DEFAULT_FILE)
    parser.add_argument('--timeout', type=int, default=120)
    parser.add_argument('--root', default='', help='a directory standing for / (tests); configfs is <root>%s' % nvmet.ROOT)
    args = parser.parse_args(argv)
    if not os.path.exists(args.file):
        print('%s: no saved nvmet configuration, nothing to restore' % args.file)
        return 0
    with open(args.file, 'r') as handle:
        config = json.load(handle)
    sysfs.ROOT = args.root
    if not args.root:
        modules = ['nvmet'] + sorted(set(TRANSPORT_MODULES[p['addr']['trtype']] for p in config.get('ports', [])
                                         if p.get('addr', {}).get('trtype') in TRANSPORT_MODULES))
        modprobe(modules)
    if not nvmet.available():
        print('%s does not exist: is nvmet loaded and configfs mounted?' % sysfs.host_path(nvmet.ROOT), file=sys.stderr)
        return 1
    done, errors = restore(config, args.timeout)
    for line in done:
        print(line)
    for line in errors:
        print('not restored: %s' % line, file=sys.stderr)
    print('%s: %d change(s), %d failure(s)' % (args.file, len(done), len(errors)))
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main())
