# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""inferops.node.health_package run by ansible-playbook on localhost, into a temporary directory: check mode
installs nothing, a real run installs the package module_utils/health/health_package.py builds (the node_health role's
checker with the info modules named), a second run is changed=0, and the installed file runs with
``python3 -ES``. The managed node is this machine, so nothing here is recorded or replaced.
"""

from __future__ import annotations

import os
import subprocess
import sys

import ansible.module_utils

from ansible_collections.inferops.node.plugins.module_utils.health import health_package

COLLECTION = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..', '..'))
COLLECTIONS = os.path.dirname(os.path.dirname(os.path.dirname(COLLECTION)))
SCRIPT = os.path.join(COLLECTION, 'roles', 'node_health', 'files', 'inferops_node_health.py')

PLAYBOOK = '''---
- name: Health package
  hosts: localhost
  gather_facts: false
  tasks:
    - name: install
      inferops.node.health_package:
        script: {script}
        modules: [platform_info, sysctl_info]
        dest: "{{{{ lib }}}}/inferops-node-health.pyz"
'''


def playbook(tmp, *args):
    env = dict((key, value) for key, value in os.environ.items() if not key.startswith('ANSIBLE_'))
    env.update(ANSIBLE_CONFIG=str(tmp / 'ansible.cfg'), ANSIBLE_COLLECTIONS_PATH=COLLECTIONS, LC_ALL='C.UTF-8')
    proc = subprocess.run([sys.executable, '-m', 'ansible.cli.playbook', '-i', str(tmp / 'hosts'), '-e',
                           'lib=%s' % (tmp / 'lib'), str(tmp / 'play.yml')] + list(args), cwd=str(tmp), env=env,
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout.split('PLAY RECAP')[1]


def test_check_then_install_then_nothing_to_do(tmp_path):
    (tmp_path / 'lib').mkdir()
    (tmp_path / 'play.yml').write_text(PLAYBOOK.format(script=SCRIPT))
    (tmp_path / 'hosts').write_text('localhost ansible_connection=local ansible_python_interpreter=%s\n' % sys.executable)
    (tmp_path / 'ansible.cfg').write_text('[defaults]\nstdout_callback = ansible.builtin.default\nnocolor = true\n'
                                          'local_tmp = %s/local\nremote_tmp = %s/remote\n' % (tmp_path, tmp_path))
    dest = tmp_path / 'lib' / 'inferops-node-health.pyz'
    assert 'changed=1' in playbook(tmp_path, '--check') and not dest.exists()
    assert 'changed=1' in playbook(tmp_path)
    roots = {health_package.COLLECTION: COLLECTION,
             'ansible': os.path.dirname(os.path.dirname(os.path.abspath(ansible.module_utils.__file__)))}
    modules = ['%s.plugins.modules.%s' % (health_package.COLLECTION, name) for name in ('platform_info', 'sysctl_info')]
    assert dest.read_bytes() == health_package.build(SCRIPT, modules, roots)[0]
    assert 'changed=0' in playbook(tmp_path) and 'changed=0' in playbook(tmp_path, '--check')
    # The installed file is the checker: without a configuration its run cannot complete, and says so.
    done = subprocess.run(['/usr/bin/python3', '-ES', str(dest), str(tmp_path / 'missing.json')], capture_output=True,
                          text=True, check=False)
    assert done.returncode == 1 and 'run not completed' in done.stdout
