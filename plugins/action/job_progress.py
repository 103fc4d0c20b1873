# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""job_progress: one poll of an async job - its async_status plus the progress line of its status
file, printed on the controller. Used with until/retries, so a long job is followed by a bounded
loop that shows progress on every poll (an include that includes itself hits ansible-core's
recursion limit after about 250 polls)."""

from __future__ import annotations

import base64
import json
import time

from ansible.plugins.action import ActionBase
from ansible.utils.display import Display
from ansible.utils.vars import merge_hash

display = Display()


class ActionModule(ActionBase):

    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(('jid', 'status_file', 'label', 'wait'))
    # How often async_status is asked again within one poll's wait.
    RECHECK = 1.0

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        dummy, args = self.validate_argument_spec(argument_spec=dict(
            jid=dict(type='str', required=True),
            status_file=dict(type='str'),
            label=dict(type='str', default='progress'),
            wait=dict(type='float', default=0),
        ))
        if args['wait'] < 0:
            return dict(result, failed=True, msg='wait = %s: must be 0 or more seconds' % args['wait'])
        # As ansible.builtin.async_status does: the job's results file is under the shell's async_dir.
        async_dir = self._remote_expand_user(self.get_shell_option('async_dir', default='~/.ansible_async'))
        result.update(ansible_job_id=args['jid'], started=True, finished=False)
        status_args = {'jid': args['jid'], 'mode': 'status', '_async_dir': async_dir}
        # Within ``wait`` seconds the job is asked again every second, so the loop around this task moves
        # on about a second after the job ends, not up to a whole delay later: a 5 s delay cost a 2 GiB
        # preload before a server start 7 s on the development VM (docs/benchmarks.md, cold start).
        deadline = time.monotonic() + args['wait']
        status = self._execute_module(module_name='ansible.legacy.async_status', task_vars=task_vars,
                                      module_args=status_args)
        while not status.get('finished') and not status.get('failed') and time.monotonic() < deadline:
            time.sleep(min(self.RECHECK, max(0.0, deadline - time.monotonic())))
            status = self._execute_module(module_name='ansible.legacy.async_status', task_vars=task_vars,
                                          module_args=status_args)
        result = merge_hash(result, status)
        result['started'] = bool(result['started'])
        result['finished'] = bool(result['finished'])
        result['progress'] = self._read_status(args['status_file'], task_vars) if args['status_file'] else {}
        line = result['progress'].get('line') or ('no status yet' if args['status_file'] else 'running')
        if result['finished']:
            line += ' - job finished'
        host = (task_vars or {}).get('inventory_hostname', '')
        display.display('%s: %s: %s' % (host, args['label'], line))
        # A poll changes nothing; what the finished job changed is kept as job_changed.
        result['job_changed'] = bool(result.get('changed'))
        result['changed'] = False
        return result

    def _read_status(self, path, task_vars):
        """The status file's JSON, {} while it does not exist yet or is being replaced."""
        slurped = self._execute_module(module_name='ansible.legacy.slurp', module_args={'src': path},
                                       task_vars=task_vars)
        if slurped.get('failed') or 'content' not in slurped:
            return {}
        try:
            status = json.loads(base64.b64decode(slurped['content']).decode('utf-8'))
        except ValueError:
            return {}
        return status if isinstance(status, dict) else {}
