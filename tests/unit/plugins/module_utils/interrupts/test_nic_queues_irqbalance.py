# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""module_utils/interrupts/nic_queues.py's irqbalance ban over a real AF_UNIX socket in a host tree: which daemon
is asked (the running one, never a socket an earlier daemon left), the wait for a daemon that is still
starting, and the refusal when one runs without a socket. The listener plays irqbalance's part of the
protocol: one ``settings ban irqs ...`` message per connection, with the sender's credentials."""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import threading
import time

import pytest

from ansible_collections.inferops.node.plugins.module_utils.common import sysfs
from ansible_collections.inferops.node.plugins.module_utils.interrupts import nic_queues


class Listener:
    """A socket at ``/run/irqbalance/irqbalance<pid>.sock`` of the host tree that records what it is sent,
    opened ``delay`` seconds after it is started (as irqbalance opens its socket after its first scan)."""

    def __init__(self, root, pid, delay=0.0):
        self.path = os.path.join(root, 'run', 'irqbalance', 'irqbalance%d.sock' % pid)
        self.delay = delay
        self.received = []
        self.thread = threading.Thread(target=self._serve, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.thread.join(10)

    def _serve(self):
        time.sleep(self.delay)
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        server.bind(self.path)
        server.listen(1)
        server.settimeout(10)
        try:
            conn = server.accept()[0]
        except socket.timeout:
            return
        finally:
            server.close()
        with conn:
            message, ancillary = conn.recvmsg(1024, socket.CMSG_SPACE(12))[:2]
            self.received.append((message.decode('ascii'), [entry[:2] for entry in ancillary]))


@pytest.fixture
def root(monkeypatch):
    """A host tree with /proc/1/comm (systemd) and an empty /run/irqbalance. In /tmp, not in pytest's
    tmp_path: a socket's path has at most 107 bytes, and CI's tmp_path alone is about 70."""
    tree = tempfile.mkdtemp(prefix='irqb', dir='/tmp')
    os.makedirs(os.path.join(tree, 'run', 'irqbalance'))
    proc(tree, 1, 'systemd')
    monkeypatch.setattr(sysfs, 'ROOT', tree)
    yield tree
    shutil.rmtree(tree)


def proc(root, pid, comm):
    os.makedirs(os.path.join(root, 'proc', str(pid)))
    with open(os.path.join(root, 'proc', str(pid), 'comm'), 'w') as handle:
        handle.write(comm + '\n')


def test_no_irqbalance_running_bans_nothing_and_does_not_wait(root):
    started = time.monotonic()
    assert nic_queues.irqbalance_pids() == []
    assert nic_queues.irqbalance_ban([32, 34], wait=30) is None
    assert time.monotonic() - started < 5


def test_ban_goes_to_the_running_daemon_once_it_opens_its_socket(root):
    proc(root, 474, 'irqbalance')
    # A socket an earlier daemon left behind sorts after the running one's name: it is never chosen.
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(os.path.join(root, 'run', 'irqbalance', 'irqbalance99.sock'))
    stale.close()
    with Listener(root, 474, delay=1.5) as listener:
        assert nic_queues.irqbalance_ban([35, 32, 34, 33], wait=30) == '/run/irqbalance/irqbalance474.sock'
    assert listener.received == [('settings ban irqs 32 33 34 35', [(socket.SOL_SOCKET, socket.SCM_CREDENTIALS)])]
    assert nic_queues.irqbalance_socket() == (474, '/run/irqbalance/irqbalance474.sock')


def test_running_daemon_without_a_socket_is_refused_with_the_fix(root):
    proc(root, 474, 'irqbalance')
    socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).bind(os.path.join(root, 'run', 'irqbalance', 'irqbalance99.sock'))
    assert nic_queues.irqbalance_socket() == (474, None)
    with pytest.raises(nic_queues.NicError) as raised:
        nic_queues.irqbalance_ban([32, 34], wait=1)
    assert str(raised.value) == (
        'irqbalance (PID 474) runs but has not opened /run/irqbalance/irqbalance474.sock within 1 s, so it cannot '
        'be told to leave IRQs 32 34 alone and would move them: wait until irqbalance has started (journalctl -u '
        'irqbalance), or ban them in its own configuration and set irqbalance_ban=false')


def test_a_socket_that_refuses_is_an_error(root):
    proc(root, 474, 'irqbalance')
    # Bound, never listening: connect() is refused.
    unheard = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    unheard.bind(os.path.join(root, 'run', 'irqbalance', 'irqbalance474.sock'))
    try:
        refused = r'^cannot tell irqbalance \(/run/irqbalance/irqbalance474.sock\) to leave IRQs 32 alone: .*Connection refused'
        with pytest.raises(nic_queues.NicError, match=refused):
            nic_queues.irqbalance_ban([32])
    finally:
        unheard.close()
