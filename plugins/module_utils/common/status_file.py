# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The JSON progress file of a long module run as an C(async) job (page_cache, triton_warmup).

The ``job_progress`` action reads the file on every poll and prints its ``line``. Standard library
only. ``StatusWriter`` rewrites the file every ``interval`` seconds from a thread, atomically (a
temporary file in the same directory, then os.replace), so a reader never sees half a file.
"""

from __future__ import annotations

import datetime
import json
import math
import os
import threading
import time

__all__ = ['ARGUMENT_SPEC', 'StatusWriter', 'eta_seconds', 'option_problems', 'write_json_atomic']

# The options of a module that writes a status file (documented by the status_file doc fragment and the module).
ARGUMENT_SPEC = dict(
    status_file=dict(type='path'),
    status_interval=dict(type='float', default=1.0),
)


def option_problems(params):
    """``(option, message)`` for each status option the module cannot use: a status_file whose directory is
    missing or that is a directory, a status_interval that is not above 0."""
    problems = []
    path = params.get('status_file')
    if path:
        parent = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(parent):
            problems.append(('status_file', 'status_file: directory %s does not exist' % parent))
        elif os.path.isdir(path):
            problems.append(('status_file', 'status_file: %s is a directory' % path))
    if params.get('status_interval') is not None and params['status_interval'] <= 0:
        problems.append(('status_interval', 'status_interval must be greater than 0, got %s' % params['status_interval']))
    return problems


def eta_seconds(remaining, rate):
    """Seconds until ``remaining`` bytes are through at ``rate`` bytes/s, rounded up to a tenth: 0.0 only when
    nothing remains (never 'almost done'), None while there is no rate yet."""
    if remaining <= 0:
        return 0.0
    return math.ceil(remaining / rate * 10) / 10 if rate > 0 else None


def write_json_atomic(path, data):
    """Write JSON to path via a temp file in the same directory and os.replace()."""
    tmp = '%s.tmp.%d' % (path, os.getpid())
    with open(tmp, 'w') as handle:
        json.dump(data, handle, sort_keys=True)
        handle.write('\n')
    os.replace(tmp, path)


def _iso(epoch):
    return datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%S.%fZ')


class StatusWriter:
    """Writes ``progress.snapshot()`` (a dict with a human ``line``), plus fixed extra keys and
    ``started_at``, ``updated_at`` (ISO 8601 UTC), ``updated_epoch`` and ``pid``, to a file every
    ``interval`` seconds. ``progress`` also has ``set_state(state)``, called by stop()."""

    def __init__(self, path, progress, interval=1.0, extra=None):
        self.path = path
        self.progress = progress
        self.interval = interval
        self.extra = dict(extra or {})
        self.started = time.time()
        self._stop = threading.Event()
        self._thread = None
        self.error = None

    def write(self, **more):
        data = self.progress.snapshot()
        data.update(self.extra)
        data.update(more)
        now = time.time()
        # updated_epoch tells a reader whether the job still writes (a stale file is a dead job).
        data.update(started_at=_iso(self.started), updated_at=_iso(now), updated_epoch=round(now, 3),
                    pid=os.getpid())
        try:
            write_json_atomic(self.path, data)
        except (IOError, OSError) as exc:  # progress reporting must not kill the job it reports on
            self.error = '%s: %s' % (self.path, exc)

    def start(self):
        self.write()
        self._thread = threading.Thread(target=self._run, name='status-file')
        self._thread.daemon = True
        self._thread.start()

    def _run(self):
        while not self._stop.wait(self.interval):
            self.write()

    def stop(self, **final):
        """Stop the writer thread and write once more; ``state`` in final goes to the progress."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if 'state' in final:
            self.progress.set_state(final.pop('state'))
        self.write(**final)
