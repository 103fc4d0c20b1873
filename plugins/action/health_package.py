# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""health_package: the node health check's script with the collection modules it runs and everything they
import, as one zip application (module_utils/health/health_package.py), installed as boot_package installs its
packages: built on the controller, copied with ansible.builtin.copy, shown file by file with --diff."""

from __future__ import annotations

import os

import ansible

from ansible_collections.inferops.node.plugins.action.boot_package import ActionModule as BootPackageAction
from ansible_collections.inferops.node.plugins.module_utils.health import health_package

COLLECTION_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class ActionModule(BootPackageAction):

    ARGUMENT_SPEC = dict(BootPackageAction.ARGUMENT_SPEC, modules=dict(type='list', elements='str', default=[]))
    _VALID_ARGS = frozenset(ARGUMENT_SPEC)

    def _build(self, script, args):
        # The controller's ansible.module_utils, as AnsiballZ sends it with each module it runs.
        roots = {health_package.COLLECTION: COLLECTION_DIR, 'ansible': os.path.dirname(os.path.abspath(ansible.__file__))}
        modules = ['%s.plugins.modules.%s' % (health_package.COLLECTION, name) for name in args['modules']]
        return health_package.build(script, modules, roots)
