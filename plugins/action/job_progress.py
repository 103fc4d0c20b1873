# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""job_progress: follow an async job - its async_status plus the progress line of its status file, printed
on the controller. With ``timeout``, one task follows the job to its end (a line per ``wait`` seconds), so an
operator sees progress lines, not a loop's "FAILED - RETRYING"; without, one poll (for until/retries)."""

from __future__ import annotations

import json
import shlex
import time
import uuid

from ansible.module_utils.common.text.converters import to_text
from ansible.plugins.action import ActionBase
from ansible.utils.display import Display
from ansible.utils.vars import merge_hash

display = Display()


class ActionModule(ActionBase):

    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(('jid', 'status_file', 'label', 'wait', 'timeout'))
    # How often async_status is asked again within one poll's wait.
    RECHECK = 1.0

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        dummy, args = self.validate_argument_spec(argument_spec=dict(
            jid=dict(type='str', required=True),
            status_file=dict(type='str'),
            label=dict(type='str', default='progress'),
            wait=dict(type='float', default=0),
            timeout=dict(type='float', default=0),
        ))
        for name in ('wait', 'timeout'):
            if args[name] < 0:
                return dict(result, failed=True, msg='%s = %s: must be 0 or more seconds' % (name, args[name]))
        # As ansible.builtin.async_status does: the job's results file is under the shell's async_dir.
        async_dir = self._remote_expand_user(self.get_shell_option('async_dir', default='~/.ansible_async'))
        result.update(ansible_job_id=args['jid'], started=True, finished=False)
        status_args = {'jid': args['jid'], 'mode': 'status', '_async_dir': async_dir}
        limit = time.monotonic() + args['timeout']
        while True:
            polled = self._poll(args, status_args, task_vars)
            if polled['finished'] or polled.get('failed') or time.monotonic() >= limit:
                break
        if args['timeout'] and not polled['finished'] and not polled.get('failed'):
            polled.update(failed=True, msg='%s: the job was still running after %s s (its own async limit ends '
                                           'it; the last line above says where it was)' % (args['label'], args['timeout']))
        return merge_hash(result, polled)

    def _poll(self, args, status_args, task_vars):
        """One poll: the job's results file and the status file (again every RECHECK seconds within ``wait``
        until the job ends), async_status once the job has ended, the line printed."""
        # Within ``wait`` seconds the job is asked again every second, so the follower moves on about a
        # second after the job ends, not up to a whole interval later: a 5 s delay cost a 2 GiB preload before
        # a server start 7 s on the development VM (docs/benchmarks.md, cold start).
        deadline = time.monotonic() + max(args['wait'], self.RECHECK if args['timeout'] else 0)
        status, progress = self._read(status_args, args['status_file'])
        while not status.get('finished') and not status.get('failed') and time.monotonic() < deadline:
            time.sleep(min(self.RECHECK, max(0.0, deadline - time.monotonic())))
            status, progress = self._read(status_args, args['status_file'])
        if status.get('finished') or status.get('failed'):
            # The job's result as a task's: async_status, once, processes it as it does any module's.
            status = self._execute_module(module_name='ansible.legacy.async_status', task_vars=task_vars,
                                          module_args=status_args)
        result = dict(status)
        result['started'] = bool(result.get('started', True))
        result['finished'] = bool(result.get('finished'))
        result['progress'] = progress
        line = result['progress'].get('line') or ('no status yet' if args['status_file'] else 'running')
        if result['finished']:
            line += ' - job finished'
        host = (task_vars or {}).get('inventory_hostname', '')
        display.display('%s: %s: %s' % (host, args['label'], line))
        # A poll changes nothing; what the finished job changed is kept as job_changed.
        result['job_changed'] = bool(result.get('changed'))
        result['changed'] = False
        return result

    def _read(self, status_args, status_file):
        """Whether the job has ended (as ansible.builtin.async_status would say), and the status file's JSON ({}
        while it does not exist yet or is being replaced): both files read by one shell command. Not the
        async_status and slurp modules every second: each is a Python start on the host - about a second of a TCG
        lab guest's CPU, taken from the job it follows (a Triton image load in a guest took 711 s so followed in a
        busy CI run). async_status runs once, for the ended job's result."""
        log_path = self._connection._shell.join_path(status_args['_async_dir'], status_args['jid'])
        marker = '--inferops-job-progress-%s--' % uuid.uuid4().hex
        command = '%s; printf "\\n%%s\\n" %s; %s; exit 0' % (
            'if [ -e %s ]; then cat -- %s; else printf %%s %s; fi' % (
                shlex.quote(log_path), shlex.quote(log_path), shlex.quote(marker + 'missing')),
            shlex.quote(marker),
            'cat -- %s 2>/dev/null' % shlex.quote(status_file) if status_file else 'true')
        # The command runs on a terminal (ssh -tt), which ends lines with CRLF.
        out = to_text(self._low_level_execute_command(command, sudoable=True).get('stdout') or '').replace('\r\n', '\n')
        job, dummy, status_text = out.partition('\n%s\n' % marker)
        return job_state(job.strip(), status_args['jid'], log_path, marker + 'missing'), status_json(status_text)


def job_state(text, jid, log_path, missing):
    """What ansible.builtin.async_status returns for a job whose results file holds ``text`` (its rules, as in
    ansible-core's modules/async_status.py): no file - failed; a file not written yet - running; the job's result
    without ``started`` - finished."""
    if text == missing:
        return {'failed': True, 'msg': 'could not find job', 'ansible_job_id': jid, 'started': True, 'finished': True}
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if not isinstance(data, dict):
        return {'results_file': log_path, 'ansible_job_id': jid, 'started': True, 'finished': False}
    if 'started' not in data:
        data['finished'] = True
        data['ansible_job_id'] = jid
    elif 'finished' not in data:
        data['finished'] = False
    return data


def status_json(text):
    try:
        status = json.loads(text)
    except ValueError:
        return {}
    return status if isinstance(status, dict) else {}
