# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""boot_package: a role's boot script and the module_utils files it imports, built on the controller as
one zip application (module_utils/common/boot_package.py) and installed by ansible.builtin.copy, as
ansible.builtin.template hands its rendered file to copy. With --diff it shows the files in the package and how
they change (module_utils/common/boot_package.py's diff()), where copy could only say the zip is binary."""

from __future__ import annotations

import base64
import os
import shutil
import tempfile

from ansible import constants as C
from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.inferops.node.plugins.module_utils.common import boot_package

MODULE_UTILS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'module_utils')


class ActionModule(ActionBase):

    TRANSFERS_FILES = True
    ARGUMENT_SPEC = dict(
        script=dict(type='str', required=True),
        dest=dict(type='str', required=True),
        mode=dict(type='raw', default='0644'),
        owner=dict(type='str'),
        group=dict(type='str'),
    )
    _VALID_ARGS = frozenset(ARGUMENT_SPEC)

    def _build(self, script, args):
        """(zip bytes, names of the files in it); health_package builds another kind of package."""
        return boot_package.build(script, MODULE_UTILS)

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        dummy, args = self.validate_argument_spec(argument_spec=self.ARGUMENT_SPEC)
        script = self._find_needle('files', args['script'])
        try:
            data, names = self._build(script, args)
        except boot_package.BootPackageError as exc:
            raise AnsibleActionFail('%s %s: %s' % (self._task.action.split('.')[-1], args['script'], exc))
        # Read before copying: in a real run copy replaces the file. Only with --diff (one module run more).
        installed, unread = self._installed(args['dest'], task_vars) if self._task.diff else (None, None)
        local_tempdir = tempfile.mkdtemp(dir=C.DEFAULT_LOCAL_TMP)
        try:
            built = os.path.join(local_tempdir, os.path.basename(args['dest']))
            with open(built, 'wb') as handle:
                handle.write(data)
            new_task = self._task.copy()
            new_task.args.clear()
            new_task.args.update(dict((key, args[key]) for key in ('dest', 'mode', 'owner', 'group')
                                      if args[key] is not None), src=built)
            # ansible.legacy: the copy action a playbook would get (a local override included).
            copy_action = self._shared_loader_obj.action_loader.get(
                'ansible.legacy.copy', task=new_task, connection=self._connection, play_context=self._play_context,
                loader=self._loader, templar=self._templar, shared_loader_obj=self._shared_loader_obj)
            result.update(copy_action.run(task_vars=task_vars))
        finally:
            shutil.rmtree(local_tempdir)
        result['modules'] = names
        if self._task.diff and not result.get('failed'):
            result['diff'] = self._diff(args['dest'], installed, unread, data, result.get('diff'))
        return result

    def _installed(self, dest, task_vars):
        """(bytes of the installed file or None, why not)."""
        slurped = self._execute_module(module_name='ansible.legacy.slurp', module_args={'src': dest},
                                       task_vars=task_vars)
        if slurped.get('failed'):
            return None, slurped.get('msg', 'not read')
        return base64.b64decode(slurped['content']), None

    def _diff(self, dest, installed, unread, data, copied):
        """The package's diff, then copy's entries but the "diff skipped: binary" markers its own content
        diff of the zip gives (what stays is the file module's owner/mode diff)."""
        entries = boot_package.diff(dest, installed, data, C.MAX_FILE_SIZE_FOR_DIFF, unread)
        if self._task.no_log:  # as copy: the file names and checksums stay, the contents do not
            for entry in entries[1:]:
                entry.update(before='', after=" [[ Diff output has been hidden because 'no_log: true' was "
                                              "specified for this result ]]\n")
        if isinstance(copied, dict):
            copied = [copied]
        return entries + [entry for entry in copied or []
                          if not set(entry) & set(('dst_binary', 'src_binary', 'dst_larger', 'src_larger'))]
