# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""inferops.node.managed_files run by ansible-playbook -vvv on localhost, into a temporary directory: check mode
writes nothing and costs one module run (find), the real run writes what ansible.builtin.template/copy write (byte
for byte) and removes what is absent in one module run more (managed_files_apply), a second run changes nothing and
costs one module run, drift of content or mode is put back (with --diff through copy, for its diff; without, in one
run), a file that fails its validate command is left as it was, and bad entries are refused before anything is read.

One playbook run per phase; the managed node is this machine (a real find, copy and file), nothing recorded.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from ansible_collections.inferops.node.tests.unit.host_package import COLLECTION, role_script

COLLECTIONS = os.path.dirname(os.path.dirname(os.path.dirname(COLLECTION)))
SCRIPT = role_script('nvmeof_target', 'inferops_nvmet_restore.py')

TEMPLATE = '# for {{ who }}\n{% for i in range(2) %}\nline {{ i }}\n{% endfor %}\n'

PLAYBOOK = '''---
- name: managed files
  hosts: localhost
  gather_facts: false
  vars:
    who: tests
  tasks:
    - name: the template module's bytes, for comparison
      ansible.builtin.template:
        src: conf.j2
        dest: "{{{{ out }}}}/by-template.conf"
      check_mode: false
      when: phase == 'real'
    - name: managed
      inferops.node.managed_files:
        files:
          - {{dest: "{{{{ out }}}}/etc", state: directory, mode: "0750"}}
          - {{dest: "{{{{ out }}}}/etc/a.conf", template: conf.j2, mode: "0644"}}
          - {{dest: "{{{{ out }}}}/etc/b.conf", template: conf.j2, template_vars: {{who: b}}, mode: "0600"}}
          - {{dest: "{{{{ out }}}}/etc/c.txt", content: "hello\\n", mode: "0644"}}
          - {{dest: "{{{{ out }}}}/etc/d.sh", src: d.sh, mode: "0755"}}
          - {{dest: "{{{{ out }}}}/etc/e.pyz", package: {script}, mode: "0644"}}
          - {{dest: "{{{{ out }}}}/etc/gone", state: absent}}
      register: managed
    - name: result
      ansible.builtin.debug:
        msg: "RESULT {{{{ managed.changed_files | to_json }}}}"
'''


def run_playbook(tmp, playbook, *options):
    """ansible-playbook on this machine with the test's ansible.cfg, output and errors together."""
    env = dict((key, value) for key, value in os.environ.items() if not key.startswith('ANSIBLE_'))
    env.update(ANSIBLE_CONFIG=str(tmp / 'ansible.cfg'), ANSIBLE_COLLECTIONS_PATH=COLLECTIONS, LC_ALL='C.UTF-8')
    return subprocess.run([sys.executable, '-m', 'ansible.cli.playbook', '-i', str(tmp / 'hosts')] + list(options)
                          + [str(playbook)], cwd=str(tmp), env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True, check=False)


def play(tmp, phase, *extra):
    proc = run_playbook(tmp, tmp / 'play.yml', '-vvv', '-e', 'out=%s' % (tmp / 'out'), '-e', 'phase=%s' % phase,
                        *extra)
    managed = proc.stdout[proc.stdout.index('TASK [managed]'):proc.stdout.index('TASK [result]')] \
        if 'TASK [result]' in proc.stdout else proc.stdout
    changed = re.search(r'RESULT (\[.*?\])', proc.stdout)
    return dict(rc=proc.returncode, out=proc.stdout, modules=re.findall(r'Using module file .*/(\w+)\.py', managed),
                changed=eval(changed.group(1).replace('\\"', '"')) if changed else None)  # a JSON list of paths


@pytest.fixture(scope='module')
def tmp(tmp_path_factory):
    tmp = tmp_path_factory.mktemp('managed_files')
    (tmp / 'templates').mkdir()
    (tmp / 'templates' / 'conf.j2').write_text(TEMPLATE)
    (tmp / 'files').mkdir()
    (tmp / 'files' / 'd.sh').write_text('#!/bin/sh\necho d\n')
    (tmp / 'play.yml').write_text(PLAYBOOK.format(script=SCRIPT))
    (tmp / 'hosts').write_text('localhost ansible_connection=local ansible_python_interpreter=%s\n' % sys.executable)
    (tmp / 'ansible.cfg').write_text('[defaults]\nstdout_callback = ansible.builtin.default\nnocolor = true\n'
                                     'retry_files_enabled = false\nlocal_tmp = %s/local\nremote_tmp = %s/remote\n'
                                     % (tmp, tmp))
    (tmp / 'out').mkdir()
    return tmp


@pytest.fixture(scope='module')
def phases(tmp):
    """check, real, again, drift, again: the same play five times, in order."""
    etc = tmp / 'out' / 'etc'
    results = {}
    results['check'] = play(tmp, 'check', '--check')
    results['check_left'] = sorted(os.listdir(tmp / 'out'))
    etc.mkdir()
    (etc / 'gone').write_text('old\n')
    results['real'] = play(tmp, 'real')
    results['again'] = play(tmp, 'again')
    os.chmod(etc / 'a.conf', 0o666)
    (etc / 'c.txt').write_text('changed by hand\n')
    results['drift'] = play(tmp, 'drift', '--diff')
    results['settled'] = play(tmp, 'settled')
    os.chmod(etc / 'b.conf', 0o644)
    (etc / 'gone').write_text('back\n')
    results['drift_plain'] = play(tmp, 'drift_plain')
    return results


def test_check_mode_reports_every_file_and_writes_nothing(tmp, phases):
    result = phases['check']
    assert result['rc'] == 0, result['out'][-3000:]
    assert len(result['changed']) == 6  # the directory and five files; nothing to remove
    assert phases['check_left'] == []
    assert result['modules'] == ['find']  # the reading decides; nothing runs just to say what would change


def test_the_real_run_writes_the_template_modules_bytes_and_removes_what_is_absent(tmp, phases):
    result = phases['real']
    assert result['rc'] == 0, result['out'][-3000:]
    etc = tmp / 'out' / 'etc'
    assert (etc / 'a.conf').read_bytes() == (tmp / 'out' / 'by-template.conf').read_bytes()
    assert (etc / 'b.conf').read_text() == '# for b\nline 0\nline 1\n'
    assert (etc / 'c.txt').read_text() == 'hello\n'
    assert oct(os.stat(etc / 'd.sh').st_mode & 0o7777) == '0o755'
    assert oct(os.stat(etc / 'b.conf').st_mode & 0o7777) == '0o600'
    assert oct(os.stat(etc).st_mode & 0o7777) == '0o750'
    assert (etc / 'e.pyz').read_bytes()[:2] == b'PK'
    assert not (etc / 'gone').exists()
    assert str(etc / 'gone') in result['changed']
    assert result['modules'] == ['find', 'managed_files_apply']  # seven entries written or removed in one run


def test_a_second_run_changes_nothing_and_reads_the_host_once(phases):
    result = phases['again']
    assert result['rc'] == 0, result['out'][-3000:]
    assert result['changed'] == []
    assert result['modules'] == ['find']


def test_drift_of_content_and_mode_is_put_back_with_a_diff(tmp, phases):
    result = phases['drift']
    assert result['rc'] == 0, result['out'][-3000:]
    etc = tmp / 'out' / 'etc'
    assert sorted(result['changed']) == [str(etc / 'a.conf'), str(etc / 'c.txt')]
    assert '-changed by hand' in result['out'] and '+hello' in result['out']
    assert oct(os.stat(etc / 'a.conf').st_mode & 0o7777) == '0o644'
    assert (etc / 'c.txt').read_text() == 'hello\n'
    assert phases['settled']['changed'] == []


def test_drift_without_diff_is_put_back_in_one_module_run(tmp, phases):
    result = phases['drift_plain']
    assert result['rc'] == 0, result['out'][-3000:]
    etc = tmp / 'out' / 'etc'
    assert sorted(result['changed']) == [str(etc / 'b.conf'), str(etc / 'gone')]
    assert result['modules'] == ['find', 'managed_files_apply']
    assert oct(os.stat(etc / 'b.conf').st_mode & 0o7777) == '0o600'
    assert not (etc / 'gone').exists()


def test_a_file_that_fails_validation_is_left_as_it_was(tmp):
    target = tmp / 'out' / 'validated.conf'
    target.write_text('old\n')
    bad = tmp / 'validate.yml'
    bad.write_text('''---
- hosts: localhost
  gather_facts: false
  tasks:
    - inferops.node.managed_files:
        files:
          - {dest: "%s", content: "new\\n", validate: "grep -q old %%s"}
''' % target)
    proc = run_playbook(tmp, bad)
    assert proc.returncode != 0
    assert 'the new file failed validation (grep -q old' in proc.stdout
    assert target.read_text() == 'old\n'
    assert [name for name in os.listdir(tmp / 'out') if name.startswith('.validated')] == []


def test_bad_entries_are_refused_before_the_host_is_read(tmp):
    bad = tmp / 'bad.yml'
    bad.write_text('''---
- hosts: localhost
  gather_facts: false
  tasks:
    - inferops.node.managed_files:
        files:
          - {dest: relative/x.conf, content: x}
          - {dest: /tmp/y.conf, content: y, mode: u+rw}
          - {dest: /tmp/z.conf}
''')
    proc = run_playbook(tmp, bad, '-vvv')
    out = re.sub(r'\s+', ' ', proc.stdout)
    assert proc.returncode != 0
    assert 'relative/x.conf: dest must be an absolute path' in out
    assert "/tmp/y.conf: mode 'u+rw' must be octal" in out
    assert '/tmp/z.conf: a file needs one of template, content, src or package' in out
    assert 'Using module file' not in proc.stdout
