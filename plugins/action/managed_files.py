# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""managed_files: a role's files, directories and removals in one task that reads the host once.

Why: one ansible.builtin.template/copy/file task per file costs one remote module run per file on every run,
even when nothing differs (the copy action's stat). Here every file is rendered on the controller, the host is
read once (ansible.builtin.find over the files' parent directories, with sha1 checksums), and only what differs
is handed to ansible.builtin.copy or ansible.builtin.file, as ansible.builtin.template hands its rendered file
to copy. A run with nothing to do costs one remote module run."""

from __future__ import annotations

import base64
import hashlib
import os
import re

from ansible.errors import AnsibleActionFail
from ansible.module_utils.common.text.converters import to_bytes
from ansible.plugins.action import ActionBase
from ansible.plugins.loader import lookup_loader

from ansible_collections.inferops.node.plugins.module_utils.common import boot_package, managed_files

MODULE_UTILS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'module_utils')

FILE_OPTIONS = dict(
    dest=dict(type='str', required=True),
    state=dict(type='str', default='file', choices=['file', 'directory', 'absent']),
    template=dict(type='str'),
    content=dict(type='str'),
    src=dict(type='str'),
    package=dict(type='str'),
    template_vars=dict(type='dict'),
    validate=dict(type='str'),
    mode=dict(type='str'),
    owner=dict(type='str'),
    group=dict(type='str'),
)


class ActionModule(ActionBase):

    # Not True: ActionBase would then make and remove a remote temporary directory on every run (two remote
    # commands more); ansible.builtin.copy makes its own when a file is written.
    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(('files', 'owner', 'group'))

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        dummy, args = self.validate_argument_spec(argument_spec=dict(
            files=dict(type='list', elements='dict', required=True, options=FILE_OPTIONS,
                       mutually_exclusive=[('template', 'content', 'src', 'package')]),
            owner=dict(type='str'),
            group=dict(type='str'),
        ))
        for entry in args['files']:  # the task's owner and group for entries without their own
            for key in ('owner', 'group'):
                if entry[key] is None and entry['state'] != 'absent':
                    entry[key] = args[key]
        problems = managed_files.input_errors(args['files'])
        if problems:
            raise AnsibleActionFail('managed_files: ' + '; '.join(problems))
        wanted = [dict(entry, data=self._data(entry, task_vars)) for entry in args['files']]
        found = self._read(wanted, task_vars)
        if found.get('failed'):
            return dict(result, failed=True, msg='managed_files: reading the files failed: %s' % found.get('msg'))
        on_host = managed_files.found_by_path(found.get('files', []))

        planned = [(entry, managed_files.todo(entry, on_host.get(entry['dest']), _sha1(entry['data'])))
                   for entry in wanted]
        if self._task.diff:
            outcomes, diffs = self._one_by_one(planned, task_vars)
        elif self._task.check_mode:
            # The reading decides: an entry todo() leaves alone is what copy and file would leave alone.
            outcomes, diffs = [dict(dest=e['dest'], state=e['state'], changed=t is not None) for e, t in planned], []
        else:
            outcomes, diffs = self._all_at_once(planned, task_vars), []
        if outcomes and outcomes[-1].get('failed'):
            return dict(result, failed=True, files=outcomes[:-1], msg=outcomes[-1]['msg'])
        result.update(changed=any(o['changed'] for o in outcomes), files=outcomes,
                      changed_files=[o['dest'] for o in outcomes if o['changed']])
        if self._task.diff and diffs:
            result['diff'] = diffs
        return result

    def _all_at_once(self, planned, task_vars):
        """Every entry that differs in one run of managed_files_apply (the host decides each again)."""
        todo = [entry for entry, what in planned if what is not None]
        done = {}
        if todo:
            applied = self._execute_module(
                module_name='inferops.node.managed_files_apply', task_vars=task_vars,
                module_args=dict(entries=[self._apply_args(entry) for entry in todo]))
            if applied.get('failed'):
                return [dict(failed=True, msg='managed_files: %s' % applied.get('msg', 'failed'))]
            done = dict((item['dest'], item['changed']) for item in applied['files'])
        return [dict(dest=e['dest'], state=e['state'], changed=done.get(e['dest'], False)) for e, dummy in planned]

    def _one_by_one(self, planned, task_vars):
        """With --diff: each entry that differs through copy (or boot_package) and file, for their diffs."""
        outcomes, diffs = [], []
        for entry, what in planned:
            if what is None:
                outcomes.append(dict(dest=entry['dest'], state=entry['state'], changed=False))
                continue
            if what == 'file':
                done = self._file(entry, task_vars)
            else:
                done = self._delegate('inferops.node.boot_package' if entry['package'] else 'ansible.legacy.copy',
                                      self._copy_args(entry), task_vars)
            if done.get('failed'):
                outcomes.append(dict(failed=True, msg='managed_files: %s: %s' % (entry['dest'], done.get('msg', 'failed'))))
                break
            outcomes.append(dict(dest=entry['dest'], state=entry['state'], changed=bool(done.get('changed'))))
            diff = done.get('diff')
            diffs.extend(diff if isinstance(diff, list) else [diff] if diff else [])
        return outcomes, diffs

    @staticmethod
    def _apply_args(entry):
        args = dict((key, entry[key]) for key in ('dest', 'state', 'mode', 'owner', 'group', 'validate')
                    if entry[key] is not None)
        if entry['package'] is not None and entry['mode'] is None:
            args['mode'] = '0644'  # what boot_package installs with
        if entry['data'] is not None:
            args['content_base64'] = base64.b64encode(entry['data']).decode('ascii')
        return args

    def _data(self, entry, task_vars):
        """The file's bytes as they would be written (None for directories and removals)."""
        if entry['state'] != 'file':
            return None
        if entry['content'] is not None:
            return to_bytes(entry['content'])
        if entry['package'] is not None:
            try:
                return boot_package.build(self._find_needle('files', entry['package']), MODULE_UTILS)[0]
            except boot_package.BootPackageError as exc:
                raise AnsibleActionFail('managed_files %s: %s' % (entry['dest'], exc))
        if entry['template'] is not None:
            lookup = lookup_loader.get('ansible.builtin.template', loader=self._loader, templar=self._templar)
            return to_bytes(lookup.run([entry['template']], variables=task_vars,
                                       template_vars=entry['template_vars'] or {})[0])
        with open(self._find_needle('files', entry['src']), 'rb') as handle:
            return handle.read()

    def _read(self, wanted, task_vars):
        """One ansible.builtin.find over the parent directories: path, type, mode, owner, group, sha1."""
        parents = sorted(set(os.path.dirname(e['dest'].rstrip('/')) for e in wanted))
        names = sorted(set(os.path.basename(e['dest'].rstrip('/')) for e in wanted))
        return self._execute_module(
            module_name='ansible.legacy.find', task_vars=task_vars,
            module_args=dict(paths=parents, patterns=['^(%s)$' % '|'.join(re.escape(n) for n in names)],
                             use_regex=True, file_type='any', hidden=True, recurse=False, get_checksum=True,
                             follow=False))

    def _copy_args(self, entry):
        args = dict((key, entry[key]) for key in ('dest', 'mode', 'owner', 'group', 'validate')
                    if entry[key] is not None)
        if entry['package'] is not None:
            args['script'] = entry['package']
        elif entry['src'] is not None:
            args['src'] = self._find_needle('files', entry['src'])
        else:
            args['content'] = entry['data'].decode('utf-8', errors='surrogateescape')
        return args

    def _delegate(self, action, args, task_vars):
        """Another action plugin on the same task and connection (copy, or boot_package for its zip diff)."""
        new_task = self._task.copy()
        new_task.args.clear()
        new_task.args.update(args)
        action_plugin = self._shared_loader_obj.action_loader.get(
            action, task=new_task, connection=self._connection, play_context=self._play_context,
            loader=self._loader, templar=self._templar, shared_loader_obj=self._shared_loader_obj)
        return action_plugin.run(task_vars=task_vars)

    def _file(self, entry, task_vars):
        """ansible.builtin.file for a directory (with its attributes) or a removal."""
        module_args = dict(path=entry['dest'], state=entry['state'])
        if entry['state'] == 'directory':
            module_args.update((key, entry[key]) for key in ('mode', 'owner', 'group') if entry[key] is not None)
        return self._execute_module(module_name='ansible.legacy.file', module_args=module_args, task_vars=task_vars)


def _sha1(data):
    return None if data is None else hashlib.sha1(data).hexdigest()
