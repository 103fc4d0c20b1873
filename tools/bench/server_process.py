# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Stopping a benchmark's tritonserver and everything it started.

tritonserver's python backend runs one stub process per model instance; the
benchmark starts the server in its own session, so the whole process group ends
with it. A stub that outlived its group (re-parented to init) is still found by
the marker the benchmark puts in every server's environment.
"""

import os
import signal
import time

MARKER = 'INFEROPS_BENCH_SERVER'


def pid_alive(pid):
    try:
        with open('/proc/%d/stat' % pid) as handle:
            return handle.read().split(') ')[-1].split()[0] != 'Z'
    except OSError:
        return False


def stop_group(pid, grace):
    """SIGTERM the process group, SIGKILL it after grace seconds; reap the leader."""
    if pid is None or not pid_alive(pid):
        return False
    try:
        os.killpg(pid, signal.SIGTERM)
    except ProcessLookupError:
        return False
    deadline = time.time() + grace
    while time.time() < deadline and pid_alive(pid):
        time.sleep(0.2)
    if pid_alive(pid):
        try:
            os.killpg(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass
    return True


def marked_pids(directory):
    """Processes whose environment carries the marker of this directory."""
    wanted = ('%s=%s' % (MARKER, os.path.realpath(directory))).encode()
    found = []
    for entry in os.listdir('/proc'):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open('/proc/%s/environ' % entry, 'rb') as handle:
                if wanted in handle.read().split(b'\0'):
                    found.append(int(entry))
        except OSError:
            continue
    return found
