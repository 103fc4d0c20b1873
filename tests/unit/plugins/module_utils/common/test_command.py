# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""CommandRunner: C locale, argument lists only, programs found with get_bin_path, check mode, the log."""

from __future__ import annotations

import pytest

from ansible.module_utils import basic

from ansible_collections.inferops.node.plugins.module_utils.common.command import C_LOCALE, CommandRunner
from ansible_collections.inferops.node.tests.unit.module_harness import AnsibleExit, Replay

FINDMNT = ['findmnt', '-J', '-l', '-o', 'TARGET,SOURCE,FSTYPE,OPTIONS']


class Module(object):
    """What CommandRunner uses of AnsibleModule; run_command is AnsibleModule's (patched by Replay)."""

    run_command_environ_update = {}

    def __init__(self, check_mode=False, paths=None):
        self.check_mode = check_mode
        self.paths = paths

    def run_command(self, *args, **kwargs):
        return basic.AnsibleModule.run_command(self, *args, **kwargs)

    def get_bin_path(self, name, required=False, opt_dirs=None):
        if self.paths is None:
            return basic.AnsibleModule.get_bin_path(self, name, required=required, opt_dirs=opt_dirs)
        return self.paths.get(name)

    def fail_json(self, msg, **kwargs):
        raise AnsibleExit(True, dict(kwargs, msg=msg))


def test_c_locale_is_the_whole_environment_update():
    assert C_LOCALE == {'LANG': 'C', 'LC_ALL': 'C', 'LC_MESSAGES': 'C'}


def test_runs_in_the_c_locale_and_logs(monkeypatch):
    replay = Replay(monkeypatch, [
        {'command': FINDMNT, 'environ': {'LANG': 'C', 'LC_ALL': 'C', 'LC_MESSAGES': 'C'}, 'out': '@findmnt/fresh.json'},
        {'command': ['umount', '/data/index'], 'rc': 32, 'err': '@mount/umount_busy.stderr'},
    ])
    runner = CommandRunner(Module())
    rc, out, dummy = runner.run(FINDMNT)
    assert rc == 0 and '"filesystems"' in out
    rc, dummy, err = runner.run(['umount', '/data/index'], changes=True)
    assert rc == 32 and 'busy' in err
    replay.done()
    assert runner.log == [{'argv': FINDMNT, 'rc': 0, 'ran': True},
                          {'argv': ['umount', '/data/index'], 'rc': 32, 'ran': True}]


def test_check_mode_runs_reads_and_records_changes(monkeypatch):
    replay = Replay(monkeypatch, [{'command': FINDMNT, 'out': '{"filesystems": []}'}])
    runner = CommandRunner(Module(check_mode=True))
    assert runner.run(FINDMNT)[0] == 0
    assert runner.run(['mount', '-t', 'xfs', '/dev/md127', '/data/models'], changes=True) == (0, '', '')
    replay.done()  # the mount was not run
    assert runner.log == [{'argv': FINDMNT, 'rc': 0, 'ran': True},
                          {'argv': ['mount', '-t', 'xfs', '/dev/md127', '/data/models'], 'rc': None, 'ran': False}]


@pytest.mark.parametrize('args', ['findmnt -J', b'findmnt', [], None, ['mdadm', '--chunk', 512], ('ls', None)])
def test_only_argument_lists_of_strings(monkeypatch, args):
    replay = Replay(monkeypatch, [])
    runner = CommandRunner(Module())
    with pytest.raises(TypeError):
        runner.run(args)
    replay.done()
    assert runner.log == []


def test_program_resolved_once_and_missing_one_fails(monkeypatch):
    calls = []

    def run_command(module, args, **kwargs):
        calls.append((args, kwargs['environ_update'], kwargs['expand_user_and_vars']))
        return 0, '', ''
    monkeypatch.setattr(basic.AnsibleModule, 'run_command', run_command)
    runner = CommandRunner(Module(paths={'mdadm': '/usr/sbin/mdadm'}))
    runner.run(['mdadm', '--detail', '/dev/md127'])
    runner.run(['/usr/local/bin/mdadm', '--examine', '$HOME/~x'])
    assert calls == [(['/usr/sbin/mdadm', '--detail', '/dev/md127'], C_LOCALE, False),
                     (['/usr/local/bin/mdadm', '--examine', '$HOME/~x'], C_LOCALE, False)]
    assert runner.find('wipefs') is None
    with pytest.raises(AnsibleExit) as exc:
        runner.run(['wipefs', '--all', '/dev/nvme0n1'], changes=True)
    assert exc.value.result['msg'].startswith('wipefs: command not found on the host')
    assert len(exc.value.result['command_log']) == 2 and len(calls) == 2


def test_stdin_data_is_passed(monkeypatch):
    seen = []

    def run_command(module, args, **kwargs):
        seen.append(kwargs['data'])
        return 0, '', ''
    monkeypatch.setattr(basic.AnsibleModule, 'run_command', run_command)
    CommandRunner(Module(paths={'mdadm': '/sbin/mdadm'})).run(['mdadm', '--create', '/dev/md/x'], changes=True, data='n\n')
    assert seen == ['n\n']
