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

Usage: inferops-nvmet-restore [--timeout SECONDS] [--root DIR] [FILE]
"""

import argparse
import errno
import json
import os
import subprocess
import sys
import time

DEFAULT_FILE = '/etc/nvmet/inferops-nvmet.json'
TRANSPORT_MODULES = {'tcp': 'nvmet-tcp', 'rdma': 'nvmet-rdma', 'fc': 'nvmet-fc', 'loop': 'nvme-loop'}
SUBSYS_ATTRS = ('allow_any_host', 'serial', 'model', 'version', 'cntlid_min', 'cntlid_max', 'qid_max', 'pi_enable')
HOST_ATTRS = ('dhchap_key', 'dhchap_ctrl_key', 'dhchap_hash', 'dhchap_dhgroup')
ZERO_UUID = '00000000-0000-0000-0000-000000000000'


class Restorer(object):
    def __init__(self, root):
        self.root = root
        self.done = []

    def path(self, rel):
        return os.path.join(self.root, rel)

    def read(self, rel):
        try:
            with open(self.path(rel), 'r') as handle:
                return handle.read().strip()
        except (IOError, OSError):
            return None

    def write(self, rel, value, secret=False):
        """Write an attribute with open/write/close so the kernel's error surfaces."""
        data = str(value).encode('utf-8')
        fd = os.open(self.path(rel), os.O_WRONLY | (os.O_TRUNC if self.root != '/sys/kernel/config/nvmet' else 0))
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
        self.done.append('write %s = %s' % (rel, '********' if secret else value))

    def mkdir(self, rel):
        if not os.path.isdir(self.path(rel)):
            os.mkdir(self.path(rel))
            self.done.append('mkdir %s' % rel)

    def link(self, target, rel):
        if not os.path.lexists(self.path(rel)):
            os.symlink(self.path(target), self.path(rel))
            self.done.append('link %s -> %s' % (rel, target))

    def set_attr(self, rel, value, secret=False):
        if value is None:
            return
        if self.read(rel) != str(value):
            self.write(rel, value, secret=secret)


def modprobe(names):
    for name in names:
        subprocess.call(['modprobe', name])


def restore_static(res, config, errors):
    """Hosts, subsystems, allowed hosts: no retries needed."""
    res.mkdir('hosts')
    for host in config.get('hosts', []):
        base = 'hosts/%s' % host['nqn']
        try:
            res.mkdir(base)
            for attr in HOST_ATTRS:
                if host.get(attr):
                    res.set_attr('%s/%s' % (base, attr), host[attr], secret=attr in ('dhchap_key', 'dhchap_ctrl_key'))
        except OSError as exc:
            errors.append('host %s: %s' % (host['nqn'], exc.strerror or exc))
    for sub in config.get('subsystems', []):
        base = 'subsystems/%s' % sub['nqn']
        try:
            res.mkdir(base)
            for hnqn in sub.get('allowed_hosts', []):
                res.link('hosts/%s' % hnqn, '%s/allowed_hosts/%s' % (base, hnqn))
        except OSError as exc:
            errors.append('subsystem %s: %s' % (sub['nqn'], exc.strerror or exc))
            continue
        for attr in SUBSYS_ATTRS:
            value = sub.get('attr', {}).get(attr)
            if value is None:
                continue
            try:
                res.set_attr('%s/attr_%s' % (base, attr), value)
            except OSError as exc:
                # A fixed attribute (version, cntlid range) is not worth failing the boot for.
                print('subsystem %s: attr_%s=%s not restored: %s' % (sub['nqn'], attr, value, exc.strerror or exc), file=sys.stderr)


def device_exists(path):
    return os.path.exists(path)


def restore_namespace(res, nqn, ns):
    base = 'subsystems/%s/namespaces/%d' % (nqn, ns['nsid'])
    res.mkdir(base)
    device = ns.get('device', {})
    want_enable = int(ns.get('enable', 1))
    if res.read(base + '/enable') == '1':
        return
    path = device.get('path')
    if path and not device_exists(path):
        raise OSError(errno.ENOENT, 'backing device %s does not exist (yet)' % path)
    if path and res.read(base + '/device_path') != path:
        res.write(base + '/device_path', path)
    if device.get('uuid'):
        res.set_attr(base + '/device_uuid', device['uuid'])
    if device.get('nguid') and device['nguid'] != ZERO_UUID:
        res.set_attr(base + '/device_nguid', device['nguid'])
    if want_enable:
        res.write(base + '/enable', 1)


def restore_port(res, port):
    base = 'ports/%d' % port['portid']
    res.mkdir(base)
    linked = os.listdir(res.path(base + '/subsystems'))
    for attr in ('trtype', 'adrfam', 'traddr', 'trsvcid', 'treq'):
        value = port.get('addr', {}).get(attr)
        if value and res.read('%s/addr_%s' % (base, attr)) != value:
            if linked:
                raise OSError(errno.EACCES, 'port %d is enabled with another address (%s)' % (port['portid'], attr))
            res.write('%s/addr_%s' % (base, attr), value)
    for key, value in port.get('param', {}).items():
        if not linked:
            res.set_attr('%s/param_%s' % (base, key), value)
    for nqn in port.get('subsystems', []):
        res.link('subsystems/%s' % nqn, '%s/subsystems/%s' % (base, nqn))


def restore(config, root, timeout, sleep=time.sleep, clock=time.monotonic):
    """Apply ``config``; return (list of changes, list of errors)."""
    res = Restorer(root)
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
            except OSError as exc:
                last[name] = exc.strerror or str(exc)
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
    parser.add_argument('--root', default='/sys/kernel/config/nvmet')
    args = parser.parse_args(argv)
    if not os.path.exists(args.file):
        print('%s: no saved nvmet configuration, nothing to restore' % args.file)
        return 0
    with open(args.file, 'r') as handle:
        config = json.load(handle)
    if args.root == '/sys/kernel/config/nvmet':
        modules = ['nvmet'] + sorted(set(TRANSPORT_MODULES[p['addr']['trtype']] for p in config.get('ports', [])
                                         if p.get('addr', {}).get('trtype') in TRANSPORT_MODULES))
        modprobe(modules)
    if not os.path.isdir(args.root):
        print('%s does not exist: is nvmet loaded and configfs mounted?' % args.root, file=sys.stderr)
        return 1
    done, errors = restore(config, args.root, args.timeout)
    for line in done:
        print(line)
    for line in errors:
        print('not restored: %s' % line, file=sys.stderr)
    print('%s: %d change(s), %d failure(s)' % (args.file, len(done), len(errors)))
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main())
