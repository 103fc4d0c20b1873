# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""module_utils/serving/triton_compose.py: instances, every validation message, the compose definition, endpoints."""

from __future__ import annotations

import copy
import os

import pytest
import yaml

from ansible_collections.inferops.node.plugins.module_utils.serving import triton_compose as tc

ROOT = os.path.join(os.path.dirname(__file__), '..', '..', '..', '..', '..')


def defaults(**overrides):
    """The role's defaults (roles/triton_compose/defaults/main.yml) with overrides."""
    with open(os.path.join(ROOT, 'roles', 'triton_compose', 'defaults', 'main.yml')) as handle:
        params = yaml.safe_load(handle)
    params.update(overrides)
    return params


def inst(name, base, **extra):
    item = {'name': name, 'http_port': base, 'grpc_port': base + 1, 'metrics_port': base + 2}
    item.update(extra)
    return item


def test_defaults_are_valid():
    result = tc.plan(defaults())
    assert result['errors'] == []
    assert result['endpoints'] == ['http://127.0.0.1:8000']
    assert list(result['definition']['services']) == ['triton']


@pytest.mark.parametrize('gpu, devices, runtime, gpus', [
    ('none', 'all', None, None), ('runtime', 'all', 'nvidia', None), ('device_requests', 'all', None, 'all'),
    ('device_requests', '0,1', None, '"device=0,1"')])
def test_the_probe_tries_each_services_command_with_its_runtime_and_gpus(gpu, devices, runtime, gpus):
    """triton_command_check's input: what compose up would start, on the repository read-only."""
    result = tc.plan(defaults(triton_compose_gpu=gpu, triton_compose_gpu_devices=devices,
                              triton_compose_instances=[inst('a', 8000), inst('b', 8100)]))
    probe, services = result['probe'], result['definition']['services']
    assert (probe['runtime'], probe['gpus']) == (runtime, gpus)
    assert probe['image'] == 'nvcr.io/nvidia/tritonserver:24.05-py3'
    assert probe['commands'] == [{'name': 'a', 'command': services['a']['command']},
                                 {'name': 'b', 'command': services['b']['command']}]
    assert probe['volumes'] == ['/data/models:/models:ro']
    assert probe['environment'] == services['a']['environment']


def test_no_probe_for_invalid_input():
    assert tc.plan(defaults(triton_compose_instances=[inst('a', 8000), inst('b', 8000)]))['probe'] is None


def test_instances_fill_defaults():
    params = defaults(triton_compose_memory_max='96G', triton_compose_memory_high='',
                      triton_compose_instances=[inst('a', 8000, cpuset=' 0 - 3 ', memory_high='80G', extra_args=None)])
    assert tc.instances(params) == [{
        'name': 'a', 'http_port': 8000, 'grpc_port': 8001, 'metrics_port': 8002, 'cpuset': '0-3',
        'numa_node': None, 'extra_args': [], 'slice': 'inferops-triton-a.slice',
        'memory_max': '96g', 'memory_low': '', 'memory_high': '80g',
    }]


def test_systemd_files_engine_waits_for_the_repository_and_slices_for_memory_high():
    result = tc.plan(defaults(triton_compose_instances=[inst('a', 8000, memory_high='80g'), inst('b', 8100)]))
    assert [(f['dest'], f.get('state'), f.get('template')) for f in result['engine_files']] == [
        ('/etc/systemd/system/docker.service.d', 'directory', None),
        ('/etc/systemd/system/docker.service.d/inferops-model-repository.conf', None, 'docker-model-repository.conf.j2')]
    assert [(f['dest'], f['template'], f['template_vars']['item']['memory_high']) for f in result['slice_files']] == [
        ('/etc/systemd/system/inferops-triton-a.slice', 'instance.slice.j2', '80g')]
    # Nothing to write from input the role refuses.
    refused = tc.plan(defaults(triton_compose_instances=[inst('a', 8000), inst('a', 8000)]))
    assert (refused['engine_files'], refused['slice_files']) == ([], [])


def test_hk_example_inventory_compose():
    """The seed's two instances (inventories/hk_local_raid0/group_vars/serving.yml)."""
    with open(os.path.join(ROOT, 'inventories', 'hk_local_raid0', 'group_vars', 'serving.yml')) as handle:
        site = dict((k, v) for k, v in yaml.safe_load(handle).items() if k.startswith('triton_compose_'))
    result = tc.plan(defaults(**site))
    assert result['errors'] == []
    svc = result['definition']['services']['triton-1']
    assert svc['command'] == [
        'tritonserver', '--model-repository=/models', '--exit-on-error=false', '--http-port=8100',
        '--grpc-port=8101', '--metrics-port=8102', '--http-address=0.0.0.0', '--grpc-address=0.0.0.0',
        '--metrics-address=0.0.0.0', '--pinned-memory-pool-byte-size=268435456', '--cache-config',
        'local,size=134217728', '--host-policy=cpu,cpu-cores=32-63', '--host-policy=cpu,numa-node=0',
        '--backend-config=onnxruntime,enable-global-threadpool=1', '--backend-config=onnxruntime,intra_op_thread_count=16',
        '--backend-config=onnxruntime,inter_op_thread_count=2',
    ]
    assert list(svc) == ['image', 'command', 'restart', 'init', 'stop_grace_period', 'volumes', 'environment',
                         'ulimits', 'shm_size', 'labels', 'network_mode', 'healthcheck', 'cpuset', 'cap_add',
                         'mem_limit', 'cgroup_parent', 'runtime']
    assert svc['environment'] == {'NVIDIA_VISIBLE_DEVICES': 'all', 'CUDA_MPS_ACTIVE_THREAD_PERCENTAGE': '60'}
    assert svc['ulimits'] == {'nofile': {'soft': 1048576, 'hard': 1048576}, 'memlock': {'soft': -1, 'hard': -1},
                              'stack': {'soft': 67108864, 'hard': 67108864}}
    assert svc['mem_limit'] == '180g' and svc['cgroup_parent'] == 'inferops-triton-triton-1.slice'
    assert svc['healthcheck']['test'][-1] == 'http://127.0.0.1:8100/v2/health/ready'


def test_published_ports_ipv6_probe_and_device_requests():
    params = defaults(triton_compose_host_network=False, triton_compose_bind_address='fe80::1',
                      triton_compose_gpu='device_requests', triton_compose_gpu_devices='0,GPU-1',
                      triton_compose_cache_size=0, triton_compose_mps_active_thread_percentage=None,
                      triton_compose_environment={'A': 1}, triton_compose_ulimits={'nofile': {'soft': 1, 'hard': '2'}},
                      triton_compose_instances=[inst('a', 9000, cpuset='0-3,8', numa_node=1, memory_low='1G')])
    result = tc.plan(params)
    svc = result['definition']['services']['a']
    assert result['endpoints'] == ['http://[fe80::1]:9000']
    assert svc['ports'] == ['fe80::1:9000:9000', 'fe80::1:9001:9001', 'fe80::1:9002:9002']
    # Published ports: the server listens on every address of its own network namespace
    # (the host side of the ports carries the bind address) ...
    assert [a for a in svc['command'] if '-address=' in a] == [
        '--http-address=0.0.0.0', '--grpc-address=0.0.0.0', '--metrics-address=0.0.0.0']
    # ... and the probe inside the container goes to the loopback.
    assert svc['healthcheck']['test'][-1] == 'http://127.0.0.1:9000/v2/health/ready'
    assert '--cache-config' not in svc['command']
    # Several ranges: the container's cpuset only, no --host-policy cpu-cores.
    assert [a for a in svc['command'] if 'cpu-cores' in a] == []
    # The NUMA node's host policy still needs set_mempolicy, which docker's seccomp allows with SYS_NICE.
    assert svc['cap_add'] == ['SYS_NICE']
    assert svc['environment'] == {'A': '1'}
    assert svc['ulimits'] == {'nofile': {'soft': 1, 'hard': 2}}
    assert svc['mem_reservation'] == '1g' and 'runtime' not in svc
    assert svc['deploy'] == {'resources': {'reservations': {'devices': [
        {'driver': 'nvidia', 'capabilities': ['gpu'], 'device_ids': ['0', 'GPU-1']}]}}}


def test_no_host_policy_no_added_capability():
    svc = tc.plan(defaults(triton_compose_instances=[inst('a', 8000, cpuset='0-3,8')]))['definition']['services']['a']
    assert not [a for a in svc['command'] if a.startswith('--host-policy=')]
    assert 'cap_add' not in svc


@pytest.mark.parametrize('bind, host', [('0.0.0.0', '127.0.0.1'), ('::', '::1'), ('10.0.0.5', '10.0.0.5'),
                                        ('fd00::5', 'fd00::5')])
def test_probe_host(bind, host):
    assert tc.probe_host({'triton_compose_bind_address': bind}) == host


ONNX_POOL = '--backend-config=onnxruntime,enable-global-threadpool=1'


def test_onnx_thread_counts_are_server_flags_of_every_instance():
    services = tc.plan(defaults(triton_compose_instances=[inst('a', 8000), inst('b', 8100)]))['definition']['services']
    for svc in services.values():
        flags = [arg for arg in svc['command'] if arg.startswith('--backend-config=onnxruntime,')]
        assert flags == [ONNX_POOL, '--backend-config=onnxruntime,intra_op_thread_count=16',
                         '--backend-config=onnxruntime,inter_op_thread_count=2']


@pytest.mark.parametrize('intra, inter, expected', [
    (None, 2, []), (8, None, [ONNX_POOL, '--backend-config=onnxruntime,intra_op_thread_count=8'])])
def test_onnx_thread_flags_left_out_when_null(intra, inter, expected):
    params = defaults(triton_compose_onnx_intra_op_threads=intra, triton_compose_onnx_inter_op_threads=inter)
    svc = tc.plan(params)['definition']['services']['triton']
    assert [arg for arg in svc['command'] if arg.startswith('--backend-config=onnxruntime,')] == expected


def test_own_onnx_thread_flags_pass_when_the_role_sets_none():
    own = ['--backend-config=onnxruntime,enable-global-threadpool=1',
           '--backend-config=onnxruntime,intra_op_thread_count=4']
    result = tc.plan(defaults(triton_compose_onnx_intra_op_threads=None, triton_compose_extra_args=own))
    assert result['errors'] == []
    assert result['definition']['services']['triton']['command'][-2:] == own


def test_single_cpu_and_no_healthcheck_no_gpu():
    svc = tc.plan(defaults(triton_compose_healthcheck=False, triton_compose_gpu='none',
                           triton_compose_instances=[inst('a', 8000, cpuset='5')]))['definition']['services']['a']
    assert '--host-policy=cpu,cpu-cores=5-5' in svc['command']
    assert svc['cap_add'] == ['SYS_NICE']
    assert 'healthcheck' not in svc and 'runtime' not in svc and 'deploy' not in svc
    assert 'NVIDIA_VISIBLE_DEVICES' not in svc['environment']


ERROR_CASES = [
    ({'triton_compose_project_name': 'Bad Name'},
     "triton_compose_project_name = \"Bad Name\": must be lower case letters, digits, '-' and '_', starting with "
     "a letter or digit"),
    ({'triton_compose_project_dir': '/'}, 'triton_compose_project_dir = "/": must be an absolute path other than /'),
    ({'triton_compose_model_repository': 'models'},
     'triton_compose_model_repository = "models": must be an absolute path other than /'),
    ({'triton_compose_image': 'a b'}, 'triton_compose_image = "a b": must be an image reference'),
    ({'triton_compose_instances': []},
     "triton_compose_instances names = []: at least one instance, each with a unique name of letters, digits, "
     "'-' and '_'"),
    ({'triton_compose_instances': [inst('a', 8000), inst('a', 8100)]},
     "triton_compose_instances names = [\"a\", \"a\"]: at least one instance, each with a unique name of letters, "
     "digits, '-' and '_'"),
    ({'triton_compose_instances': [inst('a', 65534)]},
     'triton_compose_instances ports = [65534, 65535, 65536]: http_port, grpc_port and metrics_port must be '
     'integers between 1 and 65535'),
    ({'triton_compose_instances': [inst('a', 28000), inst('b', 28100, grpc_port=28001)]},
     'triton_compose_instances: port conflict: port 28001 is both a.grpc_port and b.grpc_port'),
    ({'triton_compose_instances': [inst('a', 8000, cpuset='0-15:2/4')]},
     'triton_compose_instances cpuset = ["0-15:2/4"]: each cpuset must be empty or a cpulist such as 0-31 or '
     '0-15,32-47'),
    ({'triton_compose_instances': [inst('a', 8000, cpuset='0-1'), inst('b', 8100, cpuset='1')]},
     'triton_compose_instances: overlapping cpusets: a (0-1) and b (1)'),
    ({'triton_compose_instances': [inst('a', 8000, numa_node=-1)]},
     'triton_compose_instances numa_node = [-1]: must be null or a NUMA node number (0, 1, ...)'),
    ({'triton_compose_memory_high': '10 GiB'},
     'triton_compose_memory_high = "10 gib": must be empty or a size such as 96g, 512m or 1073741824 (units b, k, '
     'm, g)'),
    ({'triton_compose_instances': [inst('a', 8000, memory_max='1t')]},
     'triton_compose_instances[a].memory_max = "1t": must be empty or a size such as 96g, 512m or 1073741824 '
     '(units b, k, m, g)'),
    ({'triton_compose_instances': [inst('a', 8000, memory_max='1g', memory_high='2g')]},
     'triton_compose_instances[a]: memory_high = "2g" is above memory_max = "1g": each instance needs memory_low <= '
     'memory_high <= memory_max (set here or by triton_compose_memory_high and triton_compose_memory_max); lower '
     'memory_high or raise memory_max'),
    # Inherited: the global memory.low above an instance's own memory.max (binary units, as docker reads them).
    ({'triton_compose_memory_low': '1025m', 'triton_compose_instances': [inst('a', 8000, memory_max='1g')]},
     'triton_compose_instances[a]: memory_low = "1025m" is above memory_max = "1g": each instance needs memory_low '
     '<= memory_high <= memory_max (set here or by triton_compose_memory_low and triton_compose_memory_max); lower '
     'memory_low or raise memory_max'),
    ({'triton_compose_bind_address': '300.1.1.1'},
     'triton_compose_bind_address = "300.1.1.1": must be an IP address: 0.0.0.0 or :: for every address, or one of '
     "the host's own addresses such as 127.0.0.1"),
    ({'triton_compose_bind_address': ''},
     'triton_compose_bind_address = "": must be an IP address: 0.0.0.0 or :: for every address, or one of '
     "the host's own addresses such as 127.0.0.1"),
    ({'triton_compose_cache_size': '128MiB'},
     'triton_compose_cache_size = "128MiB": must be a number of bytes (0 or more)'),
    ({'triton_compose_pinned_memory_pool_bytes': -1},
     'triton_compose_pinned_memory_pool_bytes = -1: must be a number of bytes (0 or more)'),
    ({'triton_compose_ulimits': {'nofile': {'soft': 1}}},
     'triton_compose_ulimits = {"nofile": {"soft": 1}}: each value must be a number (-1 = unlimited) or a dict '
     'with soft and hard'),
    ({'triton_compose_shm_size': 'lots'}, 'triton_compose_shm_size = "lots": must be a size such as 1g'),
    ({'triton_compose_gpu_devices': '0, 1'},
     "triton_compose_gpu = \"runtime\" / triton_compose_gpu_devices = \"0, 1\": gpu must be runtime, "
     "device_requests or none; devices 'all' or a comma separated list of GPU indexes or UUIDs"),
    ({'triton_compose_mps_active_thread_percentage': 101},
     'triton_compose_mps_active_thread_percentage = 101: must be null or 1-100'),
    ({'triton_compose_extra_args': ['--response-cache-byte-size=1048576']},
     'triton_compose_extra_args = ["--response-cache-byte-size=1048576"]: --response-cache-byte-size is '
     'deprecated, use triton_compose_cache_size (rendered as --cache-config local,size=<bytes>)'),
    ({'triton_compose_instances': [inst('a', 8000, extra_args=['--http-port=1', 'verbose'])]},
     'triton_compose_extra_args = ["--http-port=1", "verbose"]: each item must be one --flag[=value]; '
     '--http-port is set by the role from its own variable'),
    ({'triton_compose_extra_args': ['--backend-config=onnxruntime,intra_op_thread_count=4']},
     'triton_compose_extra_args = ["--backend-config=onnxruntime,intra_op_thread_count=4"]: '
     '--backend-config=onnxruntime,intra_op_thread_count=4 is set by the role from '
     'triton_compose_onnx_intra_op_threads / triton_compose_onnx_inter_op_threads (set both to null to pass '
     'your own)'),
    ({'triton_compose_environment': {'1X': 'a'}},
     'triton_compose_environment = {"1X": "a"}: must map variable names to values'),
    ({'triton_compose_onnx_inter_op_threads': 0},
     'triton_compose_onnx_inter_op_threads = 0: must be null or a thread count of 1 or more'),
    ({'triton_compose_ready_timeout': 0}, 'triton_compose_ready_timeout = 0: must be greater than 0'),
    ({'triton_compose_log_lines': 'many'}, 'triton_compose_log_lines = "many": must be greater than 0'),
    ({'triton_compose_progress_interval': 0}, 'triton_compose_progress_interval = 0: must be greater than 0'),
]


@pytest.mark.parametrize('overrides, message', ERROR_CASES)
def test_errors_name_variable_value_and_fix(overrides, message):
    result = tc.plan(defaults(**copy.deepcopy(overrides)))
    assert result['errors'] == [message]
    assert result['definition'] is None and result['endpoints'] == []


def test_cpuset_going_down_is_refused_with_the_parser_message():
    errors = tc.errors(defaults(triton_compose_instances=[inst('a', 8000, cpuset='5-2')]))
    assert len(errors) == 1 and errors[0].startswith('triton_compose_instances[a].cpuset = "5-2": ')


def test_instance_that_is_not_a_mapping():
    errors = tc.errors(defaults(triton_compose_instances=['a']))
    assert 'triton_compose_instances[0] = "a": must be a mapping with name, http_port, grpc_port and metrics_port' \
        in errors


def test_memory_in_order_and_equal_is_valid():
    insts = [inst('a', 8000, memory_low='1g', memory_high='1024m', memory_max='1073741824'),
             inst('b', 8100, memory_low='512mb', memory_max='2g')]
    assert tc.errors(defaults(triton_compose_instances=insts)) == []


def test_every_problem_at_once():
    errors = tc.errors(defaults(triton_compose_shm_size='x', triton_compose_log_lines=0, triton_compose_image=''))
    assert len(errors) == 3
