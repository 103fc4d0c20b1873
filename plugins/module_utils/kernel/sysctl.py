# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kernel parameters (sysctl) and transparent huge pages: the rule of the kernel_tuning role and its host read.

Controller side (filter ``sysctl_plan``):

* ``merge_layers(layers)`` - the wanted parameters from layers, lowest precedence first (later wins,
  a null value removes the key): ``{key: {'value': raw value, 'source': name or name['key']}}``.
* ``key_path(key)`` - the ``/proc/sys`` path of a dotted key (sysctl.d(5): ``/`` stands for a dot
  inside a component), ``None`` when the key is not well-formed.
* ``normalize(value)`` - the form runtime and wanted values are compared in: whitespace collapsed,
  integers canonicalised (``"0010"`` and ``10`` compare equal).
* ``entry_errors`` / ``thp_errors`` - problems, each naming the variable, the value and the fix.
* ``plan(layers, info, thp)`` - entries, paths, the keys to read, the wanted values, the errors, the
  drift (wanted vs runtime, THP included, with the file that sets each key) and the congestion
  control module to load; ``info`` is what ``host_info`` returned on the host.

Host side (modules ``sysctl_info`` and ``sysctl_runtime``):

* ``host_info(names)`` - runtime values, the sysctl.d files in the order ``sysctl --system`` applies
  them and which file sets each key, THP modes, loaded kernel modules. Reads only.
* ``read_values(keys)`` - runtime values only; ``differs(current, wanted)`` - the comparison the drift
  and ``sysctl_runtime``'s writes are decided by.

Standard library only (plus module_utils/common/sysfs, whose ``ROOT`` unit tests point at a recorded tree).
"""

from __future__ import annotations

import os
import re

from ansible_collections.inferops.node.plugins.module_utils.common import cpulist, sysfs
from ansible_collections.inferops.node.plugins.module_utils.common.messages import shown, text

__all__ = [
    'BOOL_WORDS', 'BUILTIN_CC', 'CONF_DIRS', 'KEY_RE', 'THP_MODES', 'THP_PATH', 'conf_files', 'differs', 'dotted',
    'entry_errors', 'host_info', 'key_path', 'merge_layers', 'normalize', 'parse_conf', 'plan', 'read_values',
    'thp_errors', 'thp_state',
]

# A sysctl key in dotted form. Every component holds a [A-Za-z0-9_], so no component can map to
# "." or ".." under /proc/sys.
KEY_RE = re.compile(r'^[A-Za-z0-9_][A-Za-z0-9_:@+-]*(\.[A-Za-z0-9_/:@+-]*[A-Za-z0-9_][A-Za-z0-9_/:@+-]*)+$')
# Strings YAML 1.1 / Ansible read as booleans; refused as sysctl values.
BOOL_WORDS = frozenset(['yes', 'no', 'on', 'off', 'true', 'false'])
# Kernel built-in congestion controls; any other needs module tcp_<name>.
BUILTIN_CC = frozenset(['cubic', 'reno'])
CC_KEY = 'net.ipv4.tcp_congestion_control'
THP_PATH = '/sys/kernel/mm/transparent_hugepage/enabled'
CPUS_ONLINE_PATH = '/sys/devices/system/cpu/online'
# systemd's manager settings: PID 1 and every service it starts run on CPUAffinity= (systemd-system.conf(5)).
CPU_AFFINITY_FILE = '/etc/systemd/system.conf.d/50-inferops-cpu-affinity.conf'
THP_MODES = ('always', 'madvise', 'never')
UNREADABLE = '<unreadable>'

_INT_RE = re.compile(r'^-?[0-9]+$')
_NUMERIC_RE = re.compile(r'^-?[0-9]+( -?[0-9]+)*$')
_CC_RE = re.compile(r'^[a-z0-9_]+$')
_THP_CURRENT_RE = re.compile(r'\[([a-z]+)\]')


def merge_layers(layers):
    """Merge ``[{'name', 'keyed', 'settings'}]``, lowest first: later wins, None removes the key.

    Layers whose settings are not a mapping are skipped (the role refuses them before merging).
    """
    entries = {}
    for layer in layers or []:
        settings = layer.get('settings')
        if not isinstance(settings, dict):
            continue
        for key, value in settings.items():
            if value is None:
                entries.pop(key, None)
                continue
            source = "%s['%s']" % (layer['name'], key) if layer.get('keyed') else layer['name']
            # A key set again keeps its place (Ansible's combine), a removed one goes last.
            entries[key] = {'value': value, 'source': source}
    return entries


def key_path(key):
    """``/proc/sys`` path of a dotted key, or None when it is not a well-formed key."""
    if not isinstance(key, str) or not KEY_RE.match(key):
        return None
    return '/proc/sys/' + '/'.join(part.replace('/', '.') for part in key.split('.'))


def normalize(value):
    """Whitespace collapsed to single spaces; integers canonicalised when every field is one."""
    fields = text(value).split()
    if fields and all(_INT_RE.match(field) for field in fields):
        return ' '.join(str(int(field)) for field in fields)
    return ' '.join(fields)


# sysctl --system (procps): files of these directories, a name in an earlier directory hiding the same
# name in a later one, applied in file name order; /etc/sysctl.conf last.
CONF_DIRS = ('/etc/sysctl.d', '/run/sysctl.d', '/usr/local/lib/sysctl.d', '/usr/lib/sysctl.d', '/lib/sysctl.d')
SYSCTL_CONF = '/etc/sysctl.conf'
PROC_SYS = '/proc/sys'
THP_DIR = '/sys/kernel/mm/transparent_hugepage'
PROC_MODULES = '/proc/modules'
# Not walked: an automount point (systemd's proc-sys-fs-binfmt_misc.automount would mount it on access).
SKIP_DIRS = ('/proc/sys/fs/binfmt_misc',)


def dotted(key):
    """A sysctl.d key in dotted form: when its first separator is ``/``, slashes and dots swap."""
    key = key.strip()
    first = min([i for i in (key.find('.'), key.find('/')) if i >= 0] or [-1])
    if first >= 0 and key[first] == '/':
        key = key.translate(str.maketrans('./', '/.'))
    return key


def parse_conf(text):
    """``[(line number, dotted key, value, ignore_failure)]`` of a sysctl.d file (sysctl.d(5))."""
    entries = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line[0] in '#;' or '=' not in line:
            continue
        key, value = line.split('=', 1)
        key = key.strip()
        ignore = key.startswith('-')
        entries.append((number, dotted(key.lstrip('-')), value.strip(), ignore))
    return entries


def conf_files():
    """The sysctl.d files in the order ``sysctl --system`` applies them: ``[(path, shadowed paths)]``."""
    chosen = {}
    for directory in CONF_DIRS:
        for name in sysfs.listdir(directory):
            path = '%s/%s' % (directory, name)
            if not name.endswith('.conf') or sysfs.isdir(path):
                continue
            if name in chosen:
                # Same file seen twice (/lib -> /usr/lib on merged-/usr systems) is not a shadowed file.
                if sysfs.realpath(path) != sysfs.realpath(chosen[name][0]):
                    chosen[name][1].append(path)
            else:
                chosen[name] = (path, [])
    files = [chosen[name] for name in sorted(chosen)]
    if sysfs.exists(SYSCTL_CONF):
        files.append((SYSCTL_CONF, []))
    return files


def thp_state(text):
    """``{'current', 'available'}`` of a THP mode file (``always [madvise] never``); None without one."""
    if text is None:
        return None
    match = _THP_CURRENT_RE.search(text)
    return {'current': match.group(1) if match else None,
            'available': text.replace('[', '').replace(']', '').split()}


def read_values(keys):
    """``{key: runtime value}`` (whitespace collapsed; None when the key has no readable file)."""
    values = {}
    for key in keys:
        path = key_path(key)
        text = sysfs.read_attr(path) if path else None
        values[key] = None if text is None else ' '.join(text.split())
    return values


def differs(current, wanted):
    """Whether a runtime value (None: unreadable) differs from a wanted one, compared ``normalize``d."""
    return current is None or normalize(current) != normalize(wanted)


def _all_keys():
    """Every file under /proc/sys, as dotted keys (a dot inside a component written as ``/``)."""
    keys = []
    base = sysfs.host_path(PROC_SYS)
    for directory, subdirs, files in os.walk(base):
        target = PROC_SYS + directory[len(base):]
        subdirs[:] = sorted(d for d in subdirs if '%s/%s' % (target, d) not in SKIP_DIRS)
        parts = [p.replace('.', '/') for p in target[len(PROC_SYS):].strip('/').split('/') if p]
        keys.extend('.'.join(parts + [name.replace('.', '/')]) for name in sorted(files))
    return keys


def host_info(names=None):
    """What a host's kernel parameters are and where they come from (reads only).

    ``names`` - dotted keys to read (all of /proc/sys when None). Keys without a readable file are
    listed in ``unreadable`` with value None.
    """
    keys = _all_keys() if names is None else list(names)
    values = read_values(keys)
    files = []
    set_by = {}
    for path, shadowed in conf_files():
        text = sysfs.read_attr(path)
        entries = parse_conf(text) if text is not None else []
        settings = {}
        for number, key, value, ignore in entries:
            settings[key] = value
            # Later lines and files win, as sysctl --system applies them in this order.
            set_by[key] = {'file': path, 'line': number, 'value': value, 'ignore_failure': ignore}
        files.append({'path': path, 'readable': text is not None, 'shadows': shadowed, 'settings': settings})
    modules_text = sysfs.read_attr(PROC_MODULES) or ''
    return {
        'parameters': values,
        'paths': dict((key, key_path(key)) for key in keys),
        'unreadable': [key for key in keys if values[key] is None],
        'files': files,
        'set_by': set_by,
        'transparent_hugepage': {
            'enabled': thp_state(sysfs.read_attr(THP_DIR + '/enabled')),
            'defrag': thp_state(sysfs.read_attr(THP_DIR + '/defrag')),
        },
        'modules': sorted(line.split()[0] for line in modules_text.splitlines() if line.split()),
        'cpus_online': (sysfs.read_attr(CPUS_ONLINE_PATH) or '').strip() or None,
        'systemd_cpus': _pid1_cpus(sysfs.read_attr('/proc/1/status')),
    }


def _pid1_cpus(status):
    """The CPUs PID 1 (systemd) runs on, as /proc/1/status's Cpus_allowed_list gives them; None unread."""
    for line in (status or '').splitlines():
        if line.startswith('Cpus_allowed_list:'):
            return line.split(':', 1)[1].strip() or None
    return None


def entry_errors(entries, paths, runtime):
    """Problems of the merged entries against the running kernel's values (``{key: value}``), in entry order."""
    errors = []
    for key, entry in entries.items():
        value = entry['value']
        prefix = '%s = %s: ' % (entry['source'], shown(value))
        path = paths.get(key)
        current = runtime.get(key) if path else None
        if path is None:
            errors.append(prefix + shown(key) + ' is not a sysctl key in dotted form (e.g. vm.swappiness)')
        elif current is None:
            errors.append(prefix + 'unknown kernel parameter %s (no readable %s on this host)' % (key, path))
        elif isinstance(value, bool) or (isinstance(value, str) and value.strip().lower() in BOOL_WORDS):
            errors.append(prefix + 'boolean values are refused; write the value the kernel expects (e.g. 0 or 1)')
        elif isinstance(value, (dict, list, tuple, set)):
            errors.append(prefix + 'must be an integer or a string (several numbers: one string, separated by spaces)')
        elif isinstance(value, str) and ('\n' in value or '\r' in value or not value.strip()):
            errors.append(prefix + 'must be a non-empty single line')
        elif _NUMERIC_RE.match(current) and not all(_INT_RE.match(f) for f in text(value).split()):
            errors.append(prefix + '%s is numeric on this kernel (now %s), so the value must be an integer or '
                          'space-separated integers' % (key, shown(current)))
        elif key == CC_KEY and not _CC_RE.match(text(value)):
            errors.append(prefix + 'not a congestion control name')
    return errors


def thp_errors(thp, enabled):
    """The wanted THP mode must be one the kernel offers (``enabled`` as ``thp_state`` returns it)."""
    if thp is None:
        return []
    modes = ' '.join(enabled['available']) if enabled else ''
    if thp in modes.split():
        return []
    return ['kernel_tuning_thp = %s: not offered by this kernel (%s: %s)'
            % (shown(thp), THP_PATH, modes or 'missing, THP not built in')]


def cpu_affinity_errors(value, online=None):
    """kernel_tuning_systemd_cpu_affinity: a cpulist of CPUs this host has online (``online``: the kernel's
    cpulist, None before the host is read)."""
    if value is None:
        return []
    prefix = 'kernel_tuning_systemd_cpu_affinity = %s: ' % shown(value)
    try:
        cpus = cpulist.to_cpus(value)
    except cpulist.CpuListError as exc:
        return [prefix + str(exc)]
    if len(cpus) < 2:
        # Units with ConditionCPUs=>1 (Debian's irqbalance.service) count the CPUs PID 1 may use: with one,
        # systemd skips them at every boot (seen in the lab with CPUAffinity=0).
        return [prefix + 'must name at least two CPUs: with one, systemd skips units that need more '
                '(irqbalance.service has ConditionCPUs=>1); null leaves system services on every CPU']
    if online is None:
        return []
    missing = sorted(set(cpus) - set(cpulist.parse_cpulist(online)))
    if missing:
        return [prefix + 'CPU(s) %s not online on this host (online: %s)' % (cpulist.format_cpulist(missing), online)]
    return []


def plan(layers, info=None, thp=None, cpu_affinity=None):
    """What the kernel_tuning role wants, reads, refuses and finds different.

    ``info`` is the host's ``host_info`` (module sysctl_info) for ``names``; None before reading,
    when every key counts as unreadable.
    """
    info = info or {}
    entries = merge_layers(layers)
    paths = {}
    for key in entries:
        path = key_path(key)
        if path is not None:
            paths[key] = path
    values = info.get('parameters') or {}
    runtime = dict((key, normalize(values[key])) for key in paths if values.get(key) is not None)
    set_by = info.get('set_by') or {}
    enabled = (info.get('transparent_hugepage') or {}).get('enabled')
    current_thp = (enabled or {}).get('current') or ''
    want = dict((key, normalize(entry['value'])) for key, entry in entries.items())
    diff = []
    for key, wanted in want.items():
        actual = runtime.get(key, UNREADABLE)
        if differs(runtime.get(key), wanted):
            source = set_by.get(key) if isinstance(key, str) else None
            diff.append({'key': key, 'wanted': wanted, 'actual': actual,
                         'set_by': source['file'] if source else None})
    if thp is not None and current_thp != thp:
        diff.append({'key': 'transparent_hugepage/enabled', 'wanted': thp, 'actual': current_thp, 'set_by': None})
    congestion = want.get(CC_KEY)
    return {
        'entries': entries,
        'paths': paths,
        'names': list(paths),
        'runtime': runtime,
        'want': want,
        'errors': (entry_errors(entries, paths, runtime) + thp_errors(thp, enabled)
                   + cpu_affinity_errors(cpu_affinity, info.get('cpus_online') if info else None)),
        'diff': diff,
        # Keys whose runtime value differs before applying (THP is set on its own).
        'pending': [d['key'] for d in diff if d['key'] != 'transparent_hugepage/enabled'],
        'thp_path': THP_PATH,
        'thp_current': current_thp,
        'modprobe': 'tcp_' + congestion if congestion and congestion not in BUILTIN_CC else None,
        # The CPUs of system services as systemd's CPUAffinity= takes them; None: not managed.
        'cpu_affinity': _cpu_affinity_line(cpu_affinity),
        'cpu_affinity_file': CPU_AFFINITY_FILE,
    }


def _cpu_affinity_line(value):
    try:
        cpus = cpulist.to_cpus(value) if value is not None else []
    except cpulist.CpuListError:
        return None
    return cpulist.format_cpulist(cpus) or None
