# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Triton compose project of the triton_compose role: its instances, its validation and its definition.

* ``instances(params)`` - ``triton_compose_instances`` with the per-instance defaults filled in (cpuset
  without spaces, memory sizes lower case, the slice name).
* ``errors(params)`` - every problem of the role's variables, each naming the variable, the value and
  the fix: names, ports (range and conflicts), cpusets (form and overlaps), NUMA nodes, memory sizes
  and their order (low <= high <= max), the bind address, byte counts, ulimits, GPU settings, extra
  server arguments, environment, thread counts, timeouts.
* The ONNX Runtime thread counts go on each server's command line (the backend's global thread
  pool); the model repository is never written.
* ``definition(params)`` - the compose project (``{name, services}``) that tasks/render.yml writes as
  compose.yaml.
* ``plan(params)`` - all of the above plus the readiness endpoints (a list, and by service name).

``params`` maps the role's variable names (``triton_compose_*``) to their values. Used by the filter
``triton_compose_plan`` (the role's validation and rendering on the controller).
"""

from __future__ import annotations

import ipaddress
import os
import re

from ansible.module_utils.parsing.convert_bool import boolean

from ansible_collections.inferops.node.plugins.module_utils.common.cpulist import CpuListError, parse_cpulist
from ansible_collections.inferops.node.plugins.module_utils.common.messages import shown, text
from ansible_collections.inferops.node.plugins.module_utils.storage.page_cache import parse_size

__all__ = ['DEPRECATED_FLAGS', 'OWNED_FLAGS', 'definition', 'endpoints', 'errors', 'instances', 'plan',
           'probe_host']

# Server flags the role sets itself; extra arguments may not repeat them.
OWNED_FLAGS = (
    '--model-repository', '--model-store', '--http-port', '--grpc-port', '--metrics-port', '--http-address',
    '--grpc-address', '--metrics-address', '--exit-on-error', '--pinned-memory-pool-byte-size', '--cache-config',
)
DEPRECATED_FLAGS = {
    '--response-cache-byte-size': 'triton_compose_cache_size (rendered as --cache-config local,size=<bytes>)',
}
PORT_KINDS = ('http_port', 'grpc_port', 'metrics_port')
MEMORY_KINDS = ('memory_max', 'memory_low', 'memory_high')

_SIZE_RE = re.compile(r'^[0-9]+(b|k|kb|m|mb|g|gb)?$')
# Docker's cpuset form: CPUs and ranges, no stride.
_CPUSET_RE = re.compile(r'^[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*$')
_PROJECT_RE = re.compile(r'^[a-z0-9][a-z0-9_-]*$')
_NAME_RE = re.compile(r'^[A-Za-z0-9][A-Za-z0-9_-]*$')
_DIGITS_RE = re.compile(r'^[0-9]+$')
_SIGNED_RE = re.compile(r'^-?[0-9]+$')
_GPU_DEVICES_RE = re.compile(r'^(all|[A-Za-z0-9-]+(,[A-Za-z0-9-]+)*)$')
_ENV_NAME_RE = re.compile(r'^[A-Za-z_][A-Za-z0-9_]*$')
# ONNX Runtime's thread pool settings on the server's command line, which the role renders itself.
_ONNX_THREAD_ARG_RE = re.compile(
    r'^--backend-config=onnxruntime,(enable-global-threadpool|intra_op_thread_count|inter_op_thread_count)=')


def _is_int(value):
    """Jinja's ``integer`` test: an int that is not a bool."""
    return isinstance(value, int) and not isinstance(value, bool)


def _int(value):
    """Jinja's ``int`` filter: 0 for what is not a number (only reached after validation)."""
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def _size(value):
    """A memory size as compared and rendered: '' for empty, else lower case."""
    return text(value).lower() if value not in (None, '') else ''


def _or(value, fallback):
    """Jinja's ``default(fallback, true)``: the fallback for any false value."""
    return value if value else fallback


def instances(params):
    """The instances with their defaults filled in; entries that are not mappings count as empty."""
    project = params.get('triton_compose_project_name')
    out = []
    raw = params.get('triton_compose_instances')
    for inst in raw if isinstance(raw, list) else []:
        inst = inst if isinstance(inst, dict) else {}
        name = text(inst.get('name', ''))
        item = {
            'name': name,
            'http_port': inst.get('http_port'),
            'grpc_port': inst.get('grpc_port'),
            'metrics_port': inst.get('metrics_port'),
            'cpuset': text(_or(inst.get('cpuset'), '')).replace(' ', ''),
            'numa_node': inst.get('numa_node'),
            'extra_args': _or(inst.get('extra_args'), []),
            'slice': '%s-%s.slice' % (project, name),
        }
        for kind in MEMORY_KINDS:
            item[kind] = _size(_or(inst.get(kind), params.get('triton_compose_' + kind)))
        out.append(item)
    return out


def _instance_errors(params, insts):
    errors = []
    raw = params.get('triton_compose_instances')
    names = [inst['name'] for inst in insts]
    if (not isinstance(raw, list) or not raw or not all(_NAME_RE.match(n) for n in names)
            or len(set(names)) != len(names)):
        errors.append("triton_compose_instances names = %s: at least one instance, each with a unique name of "
                      "letters, digits, '-' and '_'" % shown(names))
    if isinstance(raw, list):
        for index, inst in enumerate(raw):
            if not isinstance(inst, dict):
                errors.append('triton_compose_instances[%d] = %s: must be a mapping with name, http_port, grpc_port '
                              'and metrics_port' % (index, shown(inst)))
    ports = [inst[kind] for inst in insts for kind in PORT_KINDS]
    if not all(_is_int(port) and 1 <= port <= 65535 for port in ports):
        errors.append('triton_compose_instances ports = %s: http_port, grpc_port and metrics_port must be integers '
                      'between 1 and 65535' % shown(ports))
    seen = {}
    conflicts = []
    for inst in insts:
        for kind in PORT_KINDS:
            port = inst[kind]
            if not _is_int(port):
                continue
            where = '%s.%s' % (inst['name'], kind)
            if port in seen:
                conflicts.append('port %d is both %s and %s' % (port, seen[port], where))
            else:
                seen[port] = where
    if conflicts:
        errors.append('triton_compose_instances: port conflict: ' + '; '.join(conflicts))
    cpusets = [inst['cpuset'] for inst in insts]
    if not all(c == '' or _CPUSET_RE.match(c) for c in cpusets):
        errors.append('triton_compose_instances cpuset = %s: each cpuset must be empty or a cpulist such as 0-31 '
                      'or 0-15,32-47' % shown(cpusets))
    else:
        cpus = []
        for inst in insts:
            try:
                cpus.append(set(parse_cpulist(inst['cpuset'])))
            except CpuListError as exc:  # a range going down (5-2), or beyond the kernel's maximum
                errors.append('triton_compose_instances[%s].cpuset = %s: %s'
                              % (inst['name'], shown(inst['cpuset']), exc))
                cpus.append(set())
        overlaps = ['%s (%s) and %s (%s)' % (a['name'], a['cpuset'], b['name'], b['cpuset'])
                    for i, a in enumerate(insts) for j, b in enumerate(insts)
                    if j > i and cpus[i] & cpus[j]]
        if overlaps:
            errors.append('triton_compose_instances: overlapping cpusets: ' + '; '.join(overlaps))
    nodes = [inst['numa_node'] for inst in insts]
    if not all(node is None or (_is_int(node) and node >= 0) for node in nodes):
        errors.append('triton_compose_instances numa_node = %s: must be null or a NUMA node number (0, 1, ...)'
                      % shown(nodes))
    return errors


def _memory_items(params, insts):
    items = [('triton_compose_' + kind, _size(params.get('triton_compose_' + kind))) for kind in MEMORY_KINDS]
    raw = params.get('triton_compose_instances')
    for index, inst in enumerate(insts):
        own = raw[index] if isinstance(raw[index], dict) else {}
        # Only the instance's own values: an inherited one is reported once, under its global name.
        items.extend(('triton_compose_instances[%s].%s' % (inst['name'], kind), inst[kind])
                     for kind in MEMORY_KINDS if own.get(kind))
    return items


def _memory_order_errors(insts):
    # cgroup v2 reads memory.low above memory.high, or memory.high above memory.max, without an
    # error: the protection or the throttling would then never work as the inventory means.
    errors = []
    for inst in insts:
        sizes = [(kind, inst[kind]) for kind in ('memory_low', 'memory_high', 'memory_max')
                 if inst[kind] and _SIZE_RE.match(inst[kind])]
        for (low_kind, low), (high_kind, high) in zip(sizes, sizes[1:]):
            if parse_size(low, low_kind) > parse_size(high, high_kind):
                errors.append('triton_compose_instances[%s]: %s = %s is above %s = %s: each instance needs '
                              'memory_low <= memory_high <= memory_max (set here or by triton_compose_%s and '
                              'triton_compose_%s); lower %s or raise %s'
                              % (inst['name'], low_kind, shown(low), high_kind, shown(high), low_kind, high_kind,
                                 low_kind, high_kind))
    return errors


def _bind_address_errors(params):
    bind = params.get('triton_compose_bind_address')
    try:
        ipaddress.ip_address(text(bind))
    except ValueError:
        return ['triton_compose_bind_address = %s: must be an IP address: 0.0.0.0 or :: for every address, or one '
                'of the host\'s own addresses such as 127.0.0.1' % shown(bind)]
    return []


def _extra_args_errors(params, insts):
    extra = params.get('triton_compose_extra_args')
    args = [text(arg) for arg in (extra if isinstance(extra, list) else [extra])]
    for inst in insts:
        per = inst['extra_args']
        args.extend(text(arg) for arg in (per if isinstance(per, list) else [per]))
    flags = [arg.split('=', 1)[0] for arg in args]
    problems = []
    if not all(re.match(r'^--[A-Za-z]', arg) for arg in args):
        problems.append('each item must be one --flag[=value]')
    for flag in sorted(set(flags)):
        if flag in DEPRECATED_FLAGS:
            problems.append('%s is deprecated, use %s' % (flag, DEPRECATED_FLAGS[flag]))
        if flag in OWNED_FLAGS:
            problems.append('%s is set by the role from its own variable' % flag)
    if params.get('triton_compose_onnx_intra_op_threads') is not None:
        for arg in sorted(set(args)):
            if _ONNX_THREAD_ARG_RE.match(arg):
                problems.append('%s is set by the role from triton_compose_onnx_intra_op_threads / '
                                'triton_compose_onnx_inter_op_threads (set both to null to pass your own)' % arg)
    if not problems:
        return []
    return ['triton_compose_extra_args = %s: %s' % (shown(args), '; '.join(problems))]


def errors(params):
    """Every problem of the role's variables (empty list = valid)."""
    p = params
    out = []
    project = p.get('triton_compose_project_name')
    if not isinstance(project, str) or not _PROJECT_RE.match(project):
        out.append("triton_compose_project_name = %s: must be lower case letters, digits, '-' and '_', starting "
                   "with a letter or digit" % shown(project))
    for key in ('triton_compose_project_dir', 'triton_compose_model_repository',
                'triton_compose_model_repository_target'):
        value = p.get(key)
        if not isinstance(value, str) or not value.startswith('/') or len(value) <= 1:
            out.append('%s = %s: must be an absolute path other than /' % (key, shown(value)))
    image = p.get('triton_compose_image')
    if not isinstance(image, str) or not image or re.search(r'\s', image):
        out.append('triton_compose_image = %s: must be an image reference' % shown(image))
    insts = instances(p)
    out.extend(_instance_errors(p, insts))
    for key, value in _memory_items(p, insts):
        if value and not _SIZE_RE.match(value):
            out.append('%s = %s: must be empty or a size such as 96g, 512m or 1073741824 (units b, k, m, g)'
                       % (key, shown(value)))
    out.extend(_memory_order_errors(insts))
    out.extend(_bind_address_errors(p))
    for key in ('triton_compose_pinned_memory_pool_bytes', 'triton_compose_cache_size'):
        value = p.get(key)
        if not _DIGITS_RE.match(text(value)):
            out.append('%s = %s: must be a number of bytes (0 or more)' % (key, shown(value)))
    ulimits = p.get('triton_compose_ulimits')
    if not isinstance(ulimits, dict) or not all(
            ('soft' in v and 'hard' in v) if isinstance(v, dict) else bool(_SIGNED_RE.match(text(v)))
            for v in ulimits.values()):
        out.append('triton_compose_ulimits = %s: each value must be a number (-1 = unlimited) or a dict with soft '
                   'and hard' % shown(ulimits))
    shm = p.get('triton_compose_shm_size')
    if not _SIZE_RE.match(text(shm).lower()):
        out.append('triton_compose_shm_size = %s: must be a size such as 1g' % shown(shm))
    gpu, devices = p.get('triton_compose_gpu'), p.get('triton_compose_gpu_devices')
    if gpu not in ('runtime', 'device_requests', 'none') or not _GPU_DEVICES_RE.match(text(devices)):
        out.append("triton_compose_gpu = %s / triton_compose_gpu_devices = %s: gpu must be runtime, device_requests "
                   "or none; devices 'all' or a comma separated list of GPU indexes or UUIDs"
                   % (shown(gpu), shown(devices)))
    mps = p.get('triton_compose_mps_active_thread_percentage')
    if mps is not None and not (_DIGITS_RE.match(text(mps)) and 1 <= int(text(mps)) <= 100):
        out.append('triton_compose_mps_active_thread_percentage = %s: must be null or 1-100' % shown(mps))
    out.extend(_extra_args_errors(p, insts))
    env = p.get('triton_compose_environment')
    if not isinstance(env, dict) or not all(_ENV_NAME_RE.match(text(k)) for k in env):
        out.append('triton_compose_environment = %s: must map variable names to values' % shown(env))
    for key in ('triton_compose_onnx_intra_op_threads', 'triton_compose_onnx_inter_op_threads'):
        value = p.get(key)
        if value is not None and not (_DIGITS_RE.match(text(value)) and int(text(value)) >= 1):
            out.append('%s = %s: must be null or a thread count of 1 or more' % (key, shown(value)))
    for key in ('triton_compose_ready_timeout', 'triton_compose_log_lines', 'triton_compose_progress_interval'):
        value = p.get(key)
        if not (_DIGITS_RE.match(text(value)) and int(text(value)) > 0):
            out.append('%s = %s: must be greater than 0' % (key, shown(value)))
    return out


def probe_host(params):
    """Address to probe the servers on from the target itself."""
    bind = params.get('triton_compose_bind_address')
    if bind == '0.0.0.0':
        return '127.0.0.1'
    return '::1' if bind == '::' else bind


def _url_host(host):
    return '[%s]' % host if ':' in host else host


def endpoints(params, insts=None):
    """The readiness endpoints, one per instance (http://<probe host>:<http_port>)."""
    host = _url_host(probe_host(params))
    return ['http://%s:%s' % (host, inst['http_port']) for inst in (insts if insts is not None else instances(params))]


def _onnx_thread_flags(p):
    # ONNX Runtime's thread counts as the server's global thread pool, not as parameters in each
    # model's config.pbtxt: the model files stay exactly as published (model_sync would put a
    # changed config back on its next run), and one pool per server fits the instance's cpuset.
    # With the global pool on, ONNX Runtime ignores thread counts in model configs.
    intra = p.get('triton_compose_onnx_intra_op_threads')
    if intra is None:
        return []
    flags = ['--backend-config=onnxruntime,enable-global-threadpool=1',
             '--backend-config=onnxruntime,intra_op_thread_count=%s' % text(intra)]
    inter = p.get('triton_compose_onnx_inter_op_threads')
    if inter is not None:
        flags.append('--backend-config=onnxruntime,inter_op_thread_count=%s' % text(inter))
    return flags


def _command(p, inst):
    # With published ports the container has its own network namespace: the server listens on
    # all of its addresses and the host side of each port carries the bind address (a server
    # bound to 127.0.0.1 inside the container would not be reachable through the port).
    host_network = boolean(p['triton_compose_host_network'], strict=False)
    bind = p['triton_compose_bind_address'] if host_network else '0.0.0.0'
    command = [
        'tritonserver',
        '--model-repository=%s' % p['triton_compose_model_repository_target'],
        '--exit-on-error=%s' % str(boolean(p['triton_compose_exit_on_error'], strict=False)).lower(),
        '--http-port=%s' % inst['http_port'],
        '--grpc-port=%s' % inst['grpc_port'],
        '--metrics-port=%s' % inst['metrics_port'],
        '--http-address=%s' % bind,
        '--grpc-address=%s' % bind,
        '--metrics-address=%s' % bind,
        '--pinned-memory-pool-byte-size=%s' % p['triton_compose_pinned_memory_pool_bytes'],
    ]
    cache = _int(p['triton_compose_cache_size'])
    if cache > 0:
        command.extend(['--cache-config', 'local,size=%d' % cache])
    # Triton's cpu-cores takes one range '<low>-<high>' (a single CPU is 'n-n'); a cpuset with
    # several ranges is left to the container's cpuset alone.
    if _DIGITS_RE.match(inst['cpuset']):
        command.append('--host-policy=cpu,cpu-cores=%s-%s' % (inst['cpuset'], inst['cpuset']))
    elif re.match(r'^[0-9]+-[0-9]+$', inst['cpuset']):
        command.append('--host-policy=cpu,cpu-cores=%s' % inst['cpuset'])
    if inst['numa_node'] is not None:
        command.append('--host-policy=cpu,numa-node=%s' % inst['numa_node'])
    command.extend(_onnx_thread_flags(p))
    command.extend(text(arg) for arg in p['triton_compose_extra_args'])
    command.extend(text(arg) for arg in inst['extra_args'])
    return command


def _service(p, inst):
    gpu = p['triton_compose_gpu']
    devices = text(p['triton_compose_gpu_devices'])
    env = {}
    if gpu == 'runtime':
        env['NVIDIA_VISIBLE_DEVICES'] = devices
    if p['triton_compose_mps_active_thread_percentage'] is not None:
        env['CUDA_MPS_ACTIVE_THREAD_PERCENTAGE'] = text(p['triton_compose_mps_active_thread_percentage'])
    for key, value in p['triton_compose_environment'].items():
        env[text(key)] = text(value)
    ulimits = {}
    for key, value in p['triton_compose_ulimits'].items():
        if isinstance(value, dict):
            ulimits[key] = {'soft': _int(value['soft']), 'hard': _int(value['hard'])}
        else:
            ulimits[key] = {'soft': _int(value), 'hard': _int(value)}
    svc = {
        'image': p['triton_compose_image'],
        'command': _command(p, inst),
        'restart': p['triton_compose_restart'],
        'init': True,
        'stop_grace_period': '60s',
        'volumes': [{
            'type': 'bind',
            'source': p['triton_compose_model_repository'],
            'target': p['triton_compose_model_repository_target'],
            'read_only': True,
            'bind': {'create_host_path': False},
        }],
        'environment': env,
        'ulimits': ulimits,
        'shm_size': p['triton_compose_shm_size'],
        'labels': {
            'org.inferops.role': 'triton_compose',
            'org.inferops.instance': inst['name'],
        },
    }
    probe = probe_host(p)
    if boolean(p['triton_compose_host_network'], strict=False):
        svc['network_mode'] = 'host'
    else:
        bind = p['triton_compose_bind_address']
        svc['ports'] = ['%s:%s:%s' % (bind, inst[kind], inst[kind]) for kind in PORT_KINDS]
        probe = '127.0.0.1'
    if boolean(p['triton_compose_healthcheck'], strict=False):
        svc['healthcheck'] = {
            'test': ['CMD', 'curl', '-fsS', '-o', '/dev/null',
                     'http://%s:%s/v2/health/ready' % (_url_host(probe), inst['http_port'])],
            'interval': '10s',
            'timeout': '5s',
            'retries': 3,
            'start_period': '%ss' % p['triton_compose_ready_timeout'],
        }
    if inst['cpuset']:
        svc['cpuset'] = inst['cpuset']
    # A host policy makes tritonserver set each model instance's NUMA memory policy (set_mempolicy),
    # which docker's default seccomp profile allows only with CAP_SYS_NICE: without it every model
    # failed to load in the lab guest ("Unable to reset NUMA memory policy: Operation not permitted").
    if any(arg.startswith('--host-policy=') for arg in svc['command']):
        svc['cap_add'] = ['SYS_NICE']
    if inst['memory_max']:
        svc['mem_limit'] = inst['memory_max']
    if inst['memory_low']:
        svc['mem_reservation'] = inst['memory_low']
    if inst['memory_high']:
        svc['cgroup_parent'] = inst['slice']
    if gpu == 'runtime':
        svc['runtime'] = 'nvidia'
    elif gpu == 'device_requests':
        device = {'driver': 'nvidia', 'capabilities': ['gpu']}
        if devices == 'all':
            device['count'] = 'all'
        else:
            device['device_ids'] = [d.strip() for d in devices.split(',')]
        svc['deploy'] = {'resources': {'reservations': {'devices': [device]}}}
    return svc


def definition(params, insts=None):
    """The compose project ``{name, services}``; only meaningful when ``errors(params)`` is empty."""
    insts = insts if insts is not None else instances(params)
    services = {}
    for inst in insts:
        services[inst['name']] = _service(params, inst)
    return {'name': params['triton_compose_project_name'], 'services': services}


def probe(params, project):
    """What inferops.node.triton_command_check needs to try the services' commands before a deploy:
    the image, each service's command, the read-only repository, environment, runtime and GPUs."""
    services = project['services']
    first = services[next(iter(services))] if services else {}
    gpus = None
    for request in (first.get('deploy') or {}).get('resources', {}).get('reservations', {}).get('devices', []):
        # docker's --gpus takes a CSV value: a device list with commas is quoted inside the value.
        gpus = 'all' if request.get('count') == 'all' else '"device=%s"' % ','.join(request.get('device_ids') or [])
    return {
        'image': params['triton_compose_image'],
        'commands': [{'name': name, 'command': svc['command']} for name, svc in services.items()],
        'volumes': ['%s:%s:ro' % (params['triton_compose_model_repository'], params['triton_compose_model_repository_target'])],
        'environment': first.get('environment') or {},
        'runtime': first.get('runtime'),
        'gpus': gpus,
    }


# docker.service's drop-in (templates/docker-model-repository.conf.j2): the engine waits for the repository's mount.
ENGINE_DROPIN_DIR = 'docker.service.d'
ENGINE_DROPIN = 'inferops-model-repository.conf'


def engine_files(params):
    """The managed_files entries of the engine's drop-in (and its directory) under triton_compose_systemd_dir."""
    directory = os.path.join(params.get('triton_compose_systemd_dir'), ENGINE_DROPIN_DIR)
    return [{'dest': directory, 'state': 'directory', 'mode': '0755'},
            {'dest': os.path.join(directory, ENGINE_DROPIN), 'template': 'docker-model-repository.conf.j2', 'mode': '0644'}]


def slice_files(params, insts):
    """The managed_files entries of a memory slice per instance with memory_high (templates/instance.slice.j2
    renders ``item``)."""
    return [{'dest': os.path.join(params.get('triton_compose_systemd_dir'), inst['slice']), 'template': 'instance.slice.j2',
             'template_vars': {'item': inst}, 'mode': '0644'} for inst in insts if inst['memory_high']]


def plan(params):
    """Instances, errors, and - when there is no error - the compose definition, the endpoints, the probe and
    the systemd files (the engine's drop-in, the memory slices)."""
    insts = instances(params)
    problems = errors(params)
    project = None if problems else definition(params, insts)
    urls = [] if problems else endpoints(params, insts)
    return {
        'instances': insts,
        'errors': problems,
        'definition': project,
        'endpoints': urls,
        # Which readiness endpoint is whose: a server replaced alone is waited for alone.
        'endpoint_of': dict(zip([inst['name'] for inst in insts], urls)),
        'probe_host': probe_host(params),
        'probe': None if problems else probe(params, project),
        'engine_files': [] if problems else engine_files(params),
        'slice_files': [] if problems else slice_files(params, insts),
    }
