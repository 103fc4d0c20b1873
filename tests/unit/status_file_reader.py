# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read a status file (module_utils/common/status_file.py) while a module writes it, as the job_progress action does."""

from __future__ import annotations

import json
import threading
import time

__all__ = ['read_status_while']


def read_status_while(path, action, pause=0.005):
    """Run ``action()``; meanwhile read ``path`` every ``pause`` seconds (0: as fast as possible). Returns
    action's result and each status read whose ``line`` differs from the one before; asserts that no read
    saw a partial JSON document (the writer replaces the file atomically). A missing file is waited for."""
    seen = []
    bad = []
    stop = threading.Event()

    def reader():
        while not stop.is_set():
            try:
                with open(path) as handle:
                    data = json.load(handle)
            except (IOError, OSError):
                continue
            except ValueError as exc:
                bad.append(exc)
                continue
            if not seen or data['line'] != seen[-1]['line']:
                seen.append(data)
            if pause:
                time.sleep(pause)

    thread = threading.Thread(target=reader)
    thread.start()
    try:
        result = action()
    finally:
        stop.set()
        thread.join()
    assert not bad
    return result, seen
