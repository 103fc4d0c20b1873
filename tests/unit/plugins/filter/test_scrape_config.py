# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Prometheus's scrape configuration from the inventory (module_utils/health/scrape_config.py, playbooks/scrape_config.yml).

playbooks/scrape_config.yml runs with ansible-playbook on an inventory of a storage node, a serving node with two
Triton instances on every address and one bound to loopback; what it writes is loaded by the real
``promtool check config`` (Debian's prometheus package, with the collection's alert rules it names; a missing
promtool FAILS the test), and a second run changes nothing.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest
import yaml

from ansible_collections.inferops.node.plugins.module_utils.health import scrape_config

COLLECTION = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..', '..'))
COLLECTIONS = os.path.dirname(os.path.dirname(os.path.dirname(COLLECTION)))
INSTANCES = [{'name': 'a', 'http_port': 8000, 'grpc_port': 8001, 'metrics_port': 8002},
             {'name': 'b', 'http_port': 8010, 'grpc_port': 8011, 'metrics_port': 8012}]
INVENTORY = {'all': {'children': {
    'node_health': {'hosts': {'storage1': {'ansible_host': '10.0.0.5'}}, 'children': {'serving': {}}},
    'serving': {'hosts': {
        'serve1': {'ansible_host': '10.0.0.11', 'triton_compose_instances': INSTANCES},
        'serve2': {'ansible_host': 'serve2.lab', 'triton_compose_bind_address': '127.0.0.1'},
        'serve3': {'ansible_host': '10.0.0.13', 'triton_compose_deploy': 'never'}}}}}}


TRITON_DEFAULTS = yaml.safe_load(open(os.path.join(COLLECTION, 'roles', 'triton_compose', 'defaults', 'main.yml')))


def params(**more):
    """The triton_compose role's variables: its defaults, two instances, ``more``."""
    out = dict(TRITON_DEFAULTS, triton_compose_instances=INSTANCES)
    out.update(more)
    return out


def test_targets_at_the_address_the_servers_listen_on():
    hosts = [{'name': 'serve1', 'address': '10.0.0.11', 'node_exporter': True, 'triton_compose_params': params()},
             {'name': 'serve2', 'address': 'fd00::2', 'node_exporter': False,
              'triton_compose_params': params(triton_compose_bind_address='fd00::20')},
             {'name': 'serve3', 'address': '10.0.0.13', 'node_exporter': True,
              'triton_compose_params': params(triton_compose_bind_address='127.0.0.1')}]
    found = scrape_config.targets(hosts)
    assert found['node'] == [{'targets': ['10.0.0.11:9100'], 'labels': {'node': 'serve1'}},
                             {'targets': ['10.0.0.13:9100'], 'labels': {'node': 'serve3'}}]
    assert found['triton'] == [{'targets': ['10.0.0.11:8002', '10.0.0.11:8012'], 'labels': {'node': 'serve1'}},
                               {'targets': ['[fd00::20]:8002', '[fd00::20]:8012'], 'labels': {'node': 'serve2'}},
                               {'targets': ['127.0.0.1:8002', '127.0.0.1:8012'], 'labels': {'node': 'serve3'}}]
    assert found['problems'] == ['serve3: Triton is bound to 127.0.0.1 (triton_compose_bind_address): a Prometheus on '
                                 'another machine cannot scrape it']


def test_invalid_triton_variables_give_no_target_and_say_why():
    found = scrape_config.targets([{'name': 's', 'address': 'h', 'triton_compose_params': params(
        triton_compose_instances=[{'name': 'a', 'http_port': 8000, 'grpc_port': 8000, 'metrics_port': 8002}])}])
    assert found['triton'] == [] and len(found['problems']) == 1
    assert found['problems'][0].startswith('s: triton_compose variables invalid, no Triton target: ')


def promtool(path):
    tool = shutil.which('promtool')
    assert tool, 'promtool missing: tools/bootstrap.sh installs Debian\'s prometheus package'
    done = subprocess.run([tool, 'check', 'config', path], capture_output=True, text=True, timeout=60, check=False)
    return done.returncode, done.stdout + done.stderr


@pytest.fixture(scope='module')
def rendered(tmp_path_factory):
    tmp = tmp_path_factory.mktemp('scrape')
    (tmp / 'hosts.yml').write_text(yaml.safe_dump(INVENTORY))
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=COLLECTIONS, ANSIBLE_FORCE_COLOR='0',
               ANSIBLE_STDOUT_CALLBACK='ansible.builtin.default', ANSIBLE_CALLBACK_RESULT_FORMAT='yaml')
    runs = []
    for dummy in range(2):
        done = subprocess.run(['ansible-playbook', '-i', str(tmp / 'hosts.yml'), '-e', 'inferops_scrape_dir=%s' % (tmp / 'out'),
                               os.path.join(COLLECTION, 'playbooks', 'scrape_config.yml')],
                              capture_output=True, text=True, env=env, timeout=300, cwd=str(tmp), check=False)
        assert done.returncode == 0, done.stdout + done.stderr
        runs.append(done.stdout)
    return tmp / 'out', runs


def test_the_playbook_writes_what_prometheus_loads(rendered):
    out, runs = rendered
    assert promtool(str(out / 'prometheus.yml'))[0] == 0
    document = yaml.safe_load((out / 'prometheus.yml').read_text())
    jobs = dict((job['job_name'], job['static_configs']) for job in document['scrape_configs'])
    assert jobs['node'] == [{'targets': ['10.0.0.5:9100'], 'labels': {'node': 'storage1'}},
                            {'targets': ['10.0.0.11:9100'], 'labels': {'node': 'serve1'}},
                            {'targets': ['serve2.lab:9100'], 'labels': {'node': 'serve2'}},
                            {'targets': ['10.0.0.13:9100'], 'labels': {'node': 'serve3'}}]
    # The role's default instance on serve2, bound to loopback (said in the run); none on serve3 (deploy never).
    assert jobs['triton'] == [{'targets': ['10.0.0.11:8002', '10.0.0.11:8012'], 'labels': {'node': 'serve1'}},
                              {'targets': ['127.0.0.1:8002'], 'labels': {'node': 'serve2'}}]
    assert 'serve2: Triton is bound to 127.0.0.1' in runs[0]
    assert document['rule_files'] == ['inferops-alerts.yml']
    with open(os.path.join(COLLECTION, 'monitoring', 'prometheus', 'inferops-alerts.yml')) as handle:
        assert (out / 'inferops-alerts.yml').read_text() == handle.read()
    # The second run changes nothing.
    assert 'changed=0' in runs[1].split('PLAY RECAP')[1] and 'changed=1' not in runs[1].split('PLAY RECAP')[1]


def test_promtool_refuses_a_broken_configuration(rendered, tmp_path):
    """The check is real: a configuration whose rule file is missing is refused."""
    out, dummy = rendered
    (tmp_path / 'prometheus.yml').write_text((out / 'prometheus.yml').read_text())
    assert promtool(str(tmp_path / 'prometheus.yml'))[0] != 0
