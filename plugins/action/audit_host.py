# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""audit_host: evaluate the node audit's catalogue for one host, on the controller, from what the info
modules returned on it (``reads``). Contacts no host.

The values the checks compare with are the roles' own variables for this host: the role's defaults
(roles/<role>/defaults/main.yml of this collection), then the inventory, then the role's vars
(roles/<role>/vars/main.yml), templated with the host's variables - the precedence a play running the
role would give them, so the audit and the converge cannot disagree."""

from __future__ import annotations

import inspect
import os

from ansible.errors import AnsibleError
from ansible.plugins.action import ActionBase
from ansible.module_utils.parsing.convert_bool import boolean
from ansible.template import Templar
from ansible.utils.display import Display

from ansible_collections.inferops.node.plugins.module_utils.audit import benchmark as audit_benchmark, catalogue as audit_catalogue
from ansible_collections.inferops.node.plugins.plugin_utils import role_specs

display = Display()
ROLES = role_specs.ROLES


class ActionModule(ActionBase):

    TRANSFERS_FILES = False
    _requires_connection = False
    _VALID_ARGS = frozenset(('reads',))

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        dummy, args = self.validate_argument_spec(argument_spec=dict(
            reads=dict(type='dict', required=True),
        ))
        unknown = sorted(set(args['reads']) - set(audit_catalogue.INFO_MODULES))
        if unknown:
            raise AnsibleError('reads: unknown info module(s) %s; known: %s'
                               % (', '.join(unknown), ', '.join(audit_catalogue.INFO_MODULES)))
        expected = self.expected(task_vars or {})
        results = audit_catalogue.evaluate_host(args['reads'], expected)
        health = args['reads'].get('nvme_health_info') or {}
        result.update(
            changed=False,
            results=results,
            expected=expected,
            drives=None if health.get('failed') or health.get('skipped') else health.get('controllers') or [],
            benchmarks=audit_benchmark.section(args['reads']),
            # Named here, where every read arrives, so that a gate on them lists none twice or misses one.
            failed_reads=dict((name, read) for name, read in args['reads'].items()
                              if isinstance(read, dict) and read.get('failed')),
        )
        return result

    def _load(self, role, kind):
        path = os.path.join(ROLES, role, kind, 'main.yml')
        if not os.path.exists(path):
            return {}
        # ansible-core 2.19+ templates only trusted strings: a role's defaults and vars are, as when the role loads
        # them. Before 2.19 every string loaded is a template, and load_from_file has no trusted_as_template.
        trusted = 'trusted_as_template' in inspect.signature(self._loader.load_from_file).parameters
        return self._loader.load_from_file(path, **({'trusted_as_template': True} if trusted else {})) or {}

    def _included_with(self, role, task_vars):
        """The variables a site role passes when it includes ``role`` on this host (audit_catalogue.INCLUDED_WITH),
        templated with that role's defaults and the host's variables; {} where it does not include it."""
        if role not in audit_catalogue.INCLUDED_WITH:
            return {}
        group, including, switch, passed = audit_catalogue.INCLUDED_WITH[role]
        if group not in (task_vars.get('group_names') or []):
            return {}
        variables = dict(self._load(including, 'defaults'))
        variables.update(task_vars)
        templar = Templar(loader=self._loader, variables=variables)
        if not boolean(templar.template(variables.get(switch, False)), strict=False):
            return {}
        return dict((name, templar.template(variables[source])) for name, source in passed.items())

    def _owners(self):
        """``{role: {name: role variable}}`` for audit_catalogue.VARIABLES: each name is found in the one role that
        declares it - as itself in its defaults, vars or argument spec, or else as ``__name`` in its vars (the
        role's computed form, as kernel_tuning's layers and triton_compose's plan input)."""
        declared = {}
        for role in sorted(os.listdir(ROLES)):
            declared[role] = (set(self._load(role, 'defaults')) | set(self._load(role, 'vars'))
                              | set(role_specs.role_options(role_specs.role_path(role))))
        owners = {}
        for name in audit_catalogue.VARIABLES:
            # The variable itself, as an inventory sets it; else the role's computed form.
            found = ([(role, name) for role, names in declared.items() if name in names]
                     or [(role, '__' + name) for role, names in declared.items() if '__' + name in names])
            if len(found) != 1:
                raise AnsibleError('audit_host: %s is declared by %s: a variable an audit check compares with must be '
                                   "declared by exactly one role (its defaults, vars or argument spec)"
                                   % (name, ', '.join('%s (%s)' % f for f in found) or 'no role'))
            role, variable = found[0]
            owners.setdefault(role, {})[name] = variable
        return owners

    def expected(self, task_vars):
        """``{name: value}`` of audit_catalogue.VARIABLES and AUDIT_DEFAULTS for this host, and its
        ``group_names`` (the checks of a site role judge the hosts of that site's group only)."""
        out = {'group_names': sorted(task_vars.get('group_names') or [])}
        for role, names in sorted(self._owners().items()):
            variables = dict(self._load(role, 'defaults'))
            variables.update(task_vars)
            variables.update(self._included_with(role, task_vars))
            variables.update(self._load(role, 'vars'))
            templar = Templar(loader=self._loader, variables=variables)
            for name, variable in sorted(names.items()):
                try:
                    out[name] = templar.template(variables[variable]) if variable in variables else None
                except AnsibleError as exc:
                    # The checks that need it SKIP ("unknown"); the others still run.
                    display.warning('audit_host: %s (%s of role %s) cannot be templated for this host: %s'
                                    % (name, variable, role, exc))
                    out[name] = None
        templar = Templar(loader=self._loader, variables=task_vars)
        for name in audit_catalogue.AUDIT_DEFAULTS:
            if name in task_vars:
                out[name] = templar.template(task_vars[name])
        return out
