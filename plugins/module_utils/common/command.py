# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one way the modules run commands: ``CommandRunner(module)``, created once per module run.

* Every command runs in the C locale (``C_LOCALE``), so the output parsed and the errors returned are
  the untranslated ones.
* Commands are argument lists; a string (which ``run_command`` would split, or hand to a shell) is
  refused. Arguments are passed as they are: no ``~`` or ``$VAR`` expansion.
* The program (the first argument) is found with ``get_bin_path`` (``/sbin`` and ``/usr/sbin`` included)
  unless it is an absolute path; a missing one fails the module, naming it.
* ``run(args, changes=True)`` marks a command that changes the host: in check mode it is not run,
  only recorded, and answers ``(0, '', '')``. Reads (``changes=False``, the default) run in check mode
  too, as the info modules need.
* ``log`` lists every command in order, ``{'argv', 'rc', 'ran'}`` (``rc`` None and ``ran`` false for one
  check mode skipped); the modules return it as ``command_log``. Secrets in arguments are options with
  ``no_log``, which Ansible masks in anything returned.
"""

from __future__ import annotations

__all__ = ['C_LOCALE', 'CommandRunner']

C_LOCALE = {'LANG': 'C', 'LC_ALL': 'C', 'LC_MESSAGES': 'C'}


class CommandRunner(object):
    """Runs a module's commands: C locale, argument lists, check mode, a log of what ran."""

    def __init__(self, module):
        self.module = module
        self.log = []
        self._paths = {}

    def find(self, name, opt_dirs=None):
        """Path of program ``name``, or None when the host has none (for optional tools)."""
        if name not in self._paths:
            self._paths[name] = self.module.get_bin_path(name, opt_dirs=opt_dirs or [])
        return self._paths[name]

    def run(self, args, changes=False, data=None):
        """Run ``args`` (a list); return ``(rc, out, err)``. See the module docstring for ``changes``."""
        if not isinstance(args, (list, tuple)) or not args:
            raise TypeError('CommandRunner.run needs a non-empty argument list, got %r' % (args,))
        if not all(isinstance(arg, str) for arg in args):
            raise TypeError('CommandRunner.run: every argument must be a string, got %r' % (args,))
        program = args[0]
        if not program.startswith('/'):
            program = self.find(program)
            if program is None:
                self.module.fail_json(msg='%s: command not found on the host (looked in PATH, /sbin, /usr/sbin)'
                                      % args[0], command_log=self.log)
        argv = [program] + list(args[1:])
        if changes and self.module.check_mode:
            self.log.append({'argv': argv, 'rc': None, 'ran': False})
            return 0, '', ''
        rc, out, err = self.module.run_command(argv, data=data, environ_update=dict(C_LOCALE),
                                               expand_user_and_vars=False)
        self.log.append({'argv': argv, 'rc': rc, 'ran': True})
        return rc, out, err
