# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the module unit tests share: recorded fixtures, rebuilt snapshots, faked commands, module runs.

* ``fixture(*parts)`` - text of a file below tests/unit/fixtures (``fixture_path`` - its path).
* ``build_tree(data, root)`` - rebuild a snapshot recorded by fixtures/sysfs/snapshot.py below ``root``.
* ``patch_commands(monkeypatch, run_command)`` - answer ``AnsibleModule.run_command`` with ``run_command``;
  ``get_bin_path`` returns the bare name. Every command is checked first, as community.general's UTHelper
  does: an argument list (never a string, no shell), run through ``command.CommandRunner`` in exactly the
  C locale (``C_LOCALE``).
* ``FakeHost`` - a recorded machine: a snapshot rebuilt under a temporary root (``module_utils.sysfs.ROOT``)
  and a table of command answers; any command not in the table fails the test. A command can switch
  the machine to another snapshot (``then=``), as creating an array or connecting a controller does.
  ``calls`` lists the commands in order, ``environ`` the environment each ran with.
* ``Replay(monkeypatch, calls)`` - UTHelper's way: the exact commands expected, in order, each with its
  answer (``command``, ``rc``, ``out``, ``err``, optional ``environ``); ``done()`` checks none is left.
* ``run_module(main, args)`` - run a module's ``main()`` and return ``(failed, result)``.
* ``patch_module_args(args)`` - ansible-core's own (2.19+), or the same for the older releases CI tests.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from unittest import mock

from ansible.module_utils import basic

try:
    from ansible.module_utils.testing import patch_module_args
except ImportError:  # ansible-core < 2.19: AnsibleModule reads its arguments from basic._ANSIBLE_ARGS
    @contextlib.contextmanager
    def patch_module_args(args=None):
        with mock.patch.object(basic, '_ANSIBLE_ARGS', json.dumps({'ANSIBLE_MODULE_ARGS': args or {}}).encode()):
            yield

from ansible_collections.inferops.node.plugins.module_utils.common import sysfs

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'fixtures')


def fixture_path(*parts):
    return os.path.join(FIXTURES, *parts)


def fixture(*parts):
    with open(fixture_path(*parts), 'r') as handle:
        return handle.read()


def build_tree(data, root):
    """Recreate a snapshot (``dirs``, ``files``, ``nodes``, ``links``) below ``root``; return ``data``."""
    def host(path):
        return os.path.join(root, path.lstrip('/'))

    for directory in data['dirs']:
        os.makedirs(host(directory), exist_ok=True)
    for path, content in data['files'].items():
        os.makedirs(os.path.dirname(host(path)), exist_ok=True)
        with open(host(path), 'w') as handle:
            handle.write(content)
    for path in data['nodes']:
        os.makedirs(os.path.dirname(host(path)), exist_ok=True)
        if not os.path.lexists(host(path)):
            open(host(path), 'w').close()
    for path, target in data['links'].items():
        os.makedirs(os.path.dirname(host(path)), exist_ok=True)
        if not os.path.lexists(host(path)):
            os.symlink(target, host(path))
    return data


# The environment every command of the collection runs with (plugins/module_utils/common/command.py), written
# out here so that a change there shows as a failing test.
C_LOCALE = {'LANG': 'C', 'LC_ALL': 'C', 'LC_MESSAGES': 'C'}


def command_environ(module, kwargs):
    """The variables ``run_command`` would set for this call: the module's default, then the call's own."""
    environ = dict(module.run_command_environ_update or {})
    environ.update(kwargs.get('environ_update') or {})
    return environ


def check_command(module, args, kwargs, environ=None):
    """Fail the test unless ``args`` is an argument list run in the C locale (``environ`` when given)."""
    assert isinstance(args, list) and all(isinstance(arg, str) for arg in args), 'not an argument list: %r' % (args,)
    got = command_environ(module, kwargs)
    assert got == (C_LOCALE if environ is None else environ), '%r ran with environment %r' % (args, got)
    assert not kwargs.get('use_unsafe_shell'), '%r: run through a shell' % (args,)
    # Only CommandRunner passes this: a command that lacks it did not go through the runner.
    assert kwargs.get('expand_user_and_vars') is False, '%r: not run through command.CommandRunner' % (args,)
    return got


def patch_commands(monkeypatch, run_command):
    """``run_command(module, args, **kwargs)`` must be a plain function: AnsibleModule binds itself to it.

    Every command is checked (``check_command``) before ``run_command`` answers it."""
    def checked(module, args, **kwargs):
        check_command(module, args, kwargs)
        return run_command(module, args, **kwargs)
    monkeypatch.setattr(basic.AnsibleModule, 'run_command', checked)
    monkeypatch.setattr(basic.AnsibleModule, 'get_bin_path', lambda mod, arg, required=False, opt_dirs=None: arg)


class FakeHost(object):
    """A recorded machine: snapshot ``snapshot_file % name`` of ``fixtures`` rebuilt under ``tmp_path/guest``,
    plus a table of command answers (``on``) and the commands run so far (``calls``)."""

    fixtures = ''  # below tests/unit/fixtures: the snapshots and the ``@name`` answers
    snapshot_file = '%s'

    def __init__(self, tmp_path, monkeypatch, snapshot):
        self.root = str(tmp_path / 'guest')
        self.tmp = tmp_path
        self.monkeypatch = monkeypatch
        self.calls = []
        self.environ = []
        self.table = {}
        self.snapshot = None
        self.load(snapshot)
        monkeypatch.setattr(sysfs, 'ROOT', self.root)

        def run_command(module, args, **kwargs):
            self.environ.append(command_environ(module, kwargs))
            return self.run(list(args))
        patch_commands(monkeypatch, run_command)

    # -- state
    def load(self, snapshot):
        if os.path.exists(self.root):
            shutil.rmtree(self.root)
        os.makedirs(self.root)
        build_tree(json.loads(fixture(self.fixtures, self.snapshot_file % snapshot)), self.root)
        self.snapshot = snapshot

    def path(self, target_path):
        return os.path.join(self.root, target_path.lstrip('/'))

    def read(self, target_path):
        with open(self.path(target_path)) as handle:
            return handle.read()

    # -- commands
    def on(self, args, out='', rc=0, err='', then=None):
        """Answer ``args`` with (rc, out, err) from now on (a new ``on`` for the same ``args`` replaces it).

        ``then`` is a snapshot to switch to, or a callable to run, after each answer. ``out`` / ``err``
        starting with ``@`` name a file below ``fixtures``.
        """
        self.table[tuple(args)] = (rc, out, err, then)
        return self

    def _text(self, value):
        return fixture(self.fixtures, value[1:]) if value.startswith('@') else value

    def run(self, args):
        self.calls.append(args)
        if tuple(args) not in self.table:
            raise AssertionError('unexpected command %r (snapshot %s)' % (args, self.snapshot))
        rc, out, err, then = self.table[tuple(args)]
        out, err = self._text(out), self._text(err)
        if callable(then):
            then()
        elif then:
            self.load(then)
        return rc, out, err

    def ran(self, *prefix):
        """The calls starting with ``prefix``."""
        return [c for c in self.calls if c[:len(prefix)] == list(prefix)]


class Replay(object):
    """The commands a module must run, in this order, each ``{command, rc, out, err, environ}`` (UTHelper's
    ``run_command_calls``); ``out``/``err`` starting with ``@`` name a fixture file. The environment is
    compared whole (``C_LOCALE`` unless the call says otherwise), standard input when the call has ``data``."""

    def __init__(self, monkeypatch, calls):
        self.expected = [dict(call) for call in calls]
        self.position = 0
        replay = self

        def run_command(module, args, **kwargs):
            return replay.answer(module, args, kwargs)
        monkeypatch.setattr(basic.AnsibleModule, 'run_command', run_command)
        monkeypatch.setattr(basic.AnsibleModule, 'get_bin_path', lambda mod, arg, required=False, opt_dirs=None: arg)

    def answer(self, module, args, kwargs):
        assert self.position < len(self.expected), 'unexpected command %r after the %d expected' % (
            args, len(self.expected))
        call = self.expected[self.position]
        self.position += 1
        assert args == call['command'], 'command %d: ran %r, expected %r' % (self.position, args, call['command'])
        check_command(module, args, kwargs, call.get('environ'))
        if 'data' in call:
            assert kwargs.get('data') == call['data'], 'command %d: stdin %r, expected %r' % (
                self.position, kwargs.get('data'), call['data'])
        text = [fixture(v[1:]) if v.startswith('@') else v for v in (call.get('out', ''), call.get('err', ''))]
        return call.get('rc', 0), text[0], text[1]

    def done(self):
        left = [c['command'] for c in self.expected[self.position:]]
        assert not left, 'expected commands not run: %r' % (left,)


class AnsibleExit(Exception):
    def __init__(self, failed, result):
        super(AnsibleExit, self).__init__(result.get('msg'))
        self.failed = failed
        self.result = result


def run_module(main, args, check_mode=False, diff=False):
    """Run ``main()`` with module args; return ``(failed, result)``."""
    args = dict(args, _ansible_check_mode=check_mode, _ansible_diff=diff)

    def exit_json(module, **kwargs):
        raise AnsibleExit(False, kwargs)

    def fail_json(module, msg, **kwargs):
        kwargs['msg'] = msg
        raise AnsibleExit(True, kwargs)

    orig_exit, orig_fail = basic.AnsibleModule.exit_json, basic.AnsibleModule.fail_json
    basic.AnsibleModule.exit_json, basic.AnsibleModule.fail_json = exit_json, fail_json
    try:
        with patch_module_args(args):
            try:
                main()
            except AnsibleExit as exc:
                return exc.failed, exc.result
    finally:
        basic.AnsibleModule.exit_json, basic.AnsibleModule.fail_json = orig_exit, orig_fail
    raise AssertionError('module returned without exit_json/fail_json')
