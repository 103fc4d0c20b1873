# -*- coding: utf-8 -*-
# Managed by inferops.node (role nvmeof_initiator); local changes are overwritten.
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Make one NVMe-oF connection at boot: the ExecStart of inferops-nvmf-connect@<name>.service.

Usage: inferops-nvmf-connect NAME

Reads /etc/nvme/inferops/NAME.conf (written by inferops.node.nvme_connect, mode 0600: its
NVMF_CONNECT_ARGS may hold a DH-HMAC-CHAP secret, which is never printed) and runs
``nvme connect`` every NVMF_RETRY_DELAY seconds, NVMF_ATTEMPTS times. Exits 0 as soon as the
kernel has the controller (connected now or before, or still connecting: the kernel retries by
itself while ctrl_loss_tmo lasts), 1 when every attempt failed or the file is missing or
incomplete, 2 without a NAME - so systemd reports each connection's failure on its own.

Whether the kernel has the controller is the nvme_connect module's own rule:
``nvme_fabrics.controllers()`` read from sysfs and ``nvme_fabrics.matches()`` against the
connection. That code is the collection's plugins/module_utils/fabric/nvme_fabrics.py, installed with
its siblings (sysfs.py, nvme_common.py, mount_options.py, command.py) as the package inferops
inside /usr/local/lib/inferops-nvmf-connect.pyz, whose __main__.py this script is
(inferops.node.boot_package), and run through the wrapper
/usr/local/sbin/inferops-nvmf-connect (python3 -ES). Commands run as argument lists in the
C locale (``command.C_LOCALE``).
"""

import os
import shlex
import subprocess
import sys
import time

# The package inferops is in the same zip application as this script (inferops.node.boot_package).
try:
    from inferops.common import command
    from inferops.fabric import nvme_fabrics
except ImportError:  # unit tests: the collection itself
    from ansible_collections.inferops.node.plugins.module_utils.common import command
    from ansible_collections.inferops.node.plugins.module_utils.fabric import nvme_fabrics

CONF_DIR = '/etc/nvme/inferops'
KEYS = ('NVMF_TRANSPORT', 'NVMF_TRADDR', 'NVMF_TRSVCID', 'NVMF_SUBNQN', 'NVMF_HOSTNQN', 'NVMF_HOST_IFACE',
        'NVMF_HOST_TRADDR', 'NVMF_CONNECT_ARGS', 'NVMF_RETRY_DELAY', 'NVMF_ATTEMPTS')
# Each attempt is bounded: after both the pool and this host rebooted at once, the lab once saw a
# first connect over RDMA sit in "connecting" (no identify yet) for over 5 minutes. The RDMA-CM
# waits in the kernel are interruptible, so SIGTERM ends the attempt (SIGKILL 10 s later if it
# does not); the next one starts from a fresh controller. A reachable target answers a connect in
# well under a second; an unreachable one fails within the kernel's own address and route
# timeouts (seconds).
ATTEMPT_TIMEOUT = 60
KILL_AFTER = 10


class ConfError(Exception):
    """The settings file is missing or incomplete; the message names it (never a value)."""


def read_conf(path):
    """The ``KEY=value`` lines of a settings file (values quoted as by ``shlex.quote``) -> dict of KEYS."""
    try:
        with open(path) as handle:
            text = handle.read()
    except OSError:
        raise ConfError('%s: not found' % path)
    try:
        tokens = shlex.split(text, comments=True)
    except ValueError:
        raise ConfError('%s: unbalanced quotes' % path)
    values = dict(token.split('=', 1) for token in tokens if '=' in token)
    missing = [key for key in KEYS if key not in values]
    if missing:
        raise ConfError('%s: %s not set' % (path, ', '.join(missing)))
    for key in ('NVMF_RETRY_DELAY', 'NVMF_ATTEMPTS'):
        if not values[key].isdigit():
            raise ConfError('%s: %s is not a number' % (path, key))
    return values


def connection(conf):
    """The connection as ``nvme_fabrics.matches`` takes it (unset fields None)."""
    return {
        'transport': conf['NVMF_TRANSPORT'], 'traddr': conf['NVMF_TRADDR'], 'trsvcid': conf['NVMF_TRSVCID'] or None,
        'subnqn': conf['NVMF_SUBNQN'], 'hostnqn': conf['NVMF_HOSTNQN'] or None,
        'host_iface': conf['NVMF_HOST_IFACE'] or None, 'host_traddr': conf['NVMF_HOST_TRADDR'] or None,
    }


def find_controller(conn):
    """The controller of ``conn`` the kernel has (live, connecting, resetting or new), or None."""
    for ctrl in nvme_fabrics.controllers():
        if nvme_fabrics.matches(ctrl, conn):
            return ctrl
    return None


def connect_argv(conf):
    """``nvme connect`` under ``timeout``; NVMF_CONNECT_ARGS holds validated tokens without blanks."""
    return (['timeout', '--kill-after=%d' % KILL_AFTER, str(ATTEMPT_TIMEOUT), '/usr/sbin/nvme', 'connect']
            + conf['NVMF_CONNECT_ARGS'].split())


def run(argv):
    """Run ``argv`` in the C locale, its output going where ours goes (the journal); returns the exit status."""
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        return subprocess.call(argv, env=dict(os.environ, **command.C_LOCALE))
    except OSError as exc:  # a missing program fails the attempt, as in a shell
        say('%s: %s' % (argv[0], exc.strerror), sys.stderr)
        return 127


def say(text, stream):
    print(text, file=stream, flush=True)


def connect(name, runner=run, sleep=time.sleep):
    """Connect ``name``; returns the exit status (see the module docstring)."""
    path = '%s/%s.conf' % (CONF_DIR, name)
    try:
        conf = read_conf(path)
    except ConfError as exc:
        say(str(exc), sys.stderr)
        return 1
    conn = connection(conf)
    where = '%s %s %s' % (conf['NVMF_TRANSPORT'], conf['NVMF_TRADDR'], conf['NVMF_TRSVCID'])
    attempts = int(conf['NVMF_ATTEMPTS'])

    def connected():
        ctrl = find_controller(conn)
        if ctrl is not None:
            say('%s: %s via %s is %s' % (ctrl['name'], conf['NVMF_SUBNQN'], where, ctrl['state']), sys.stdout)
        return ctrl is not None

    runner(['/sbin/modprobe', '-a', 'nvme-fabrics', 'nvme-%s' % conf['NVMF_TRANSPORT']])
    attempt = 1
    while True:
        if connected():
            return 0
        # A failed attempt may still have left a controller (the connect timed out after the kernel
        # created it): look again before counting the attempt as failed.
        runner(connect_argv(conf))
        if connected():
            return 0
        if attempt >= attempts:
            say('%s: %s: not connected after %d attempts' % (name, where, attempt), sys.stderr)
            return 1
        say('%s: attempt %d/%d failed; retrying in %s s' % (name, attempt, attempts, conf['NVMF_RETRY_DELAY']),
            sys.stderr)
        attempt += 1
        sleep(int(conf['NVMF_RETRY_DELAY']))


def main(argv):
    if len(argv) != 2 or not argv[1]:
        say('usage: inferops-nvmf-connect <name>', sys.stderr)
        return 2
    return connect(argv[1])


if __name__ == '__main__':
    sys.exit(main(sys.argv))
