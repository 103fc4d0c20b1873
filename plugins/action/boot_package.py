# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""boot_package: a role's boot script and the module_utils files it imports, built on the controller as
one zip application (module_utils/boot_package.py) and installed by ansible.builtin.copy, as
ansible.builtin.template hands its rendered file to copy."""

from __future__ import annotations

import os
import shutil
import tempfile

from ansible import constants as C
from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.inferops.node.plugins.module_utils import boot_package

MODULE_UTILS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'module_utils')


class ActionModule(ActionBase):

    TRANSFERS_FILES = True
    _VALID_ARGS = frozenset(('script', 'dest', 'mode', 'owner', 'group'))

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        dummy, args = self.validate_argument_spec(argument_spec=dict(
            script=dict(type='str', required=True),
            dest=dict(type='str', required=True),
            mode=dict(type='raw', default='0644'),
            owner=dict(type='str'),
            group=dict(type='str'),
        ))
        script = self._find_needle('files', args['script'])
        try:
            data, names = boot_package.build(script, MODULE_UTILS)
        except boot_package.BootPackageError as exc:
            raise AnsibleActionFail('boot_package %s: %s' % (args['script'], exc))
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
        return result
