# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kubernetes node labels for what was verified on a host, published through NFD's local feature files.

Label rules (Kubernetes' own, apimachinery ``IsQualifiedName`` / ``IsValidLabelValue``):

* ``label_name_errors(name)`` - ``[prefix/]name``: the prefix a DNS subdomain (lower case, <= 253), the
  name <= 63 characters of ``[A-Za-z0-9]`` at both ends and ``-_.`` inside;
* ``label_value_errors(value)`` - empty, or <= 63 characters of the same shape;
* ``prefix_errors(prefix)`` - a DNS subdomain that node-feature-discovery's master publishes: it always
  drops ``kubernetes.io`` / ``k8s.io`` and their sub-namespaces, except ``feature.node.kubernetes.io``,
  ``profile.node.kubernetes.io`` and their sub-namespaces, which it always allows (any other namespace
  needs ``extraLabelNs`` on NFD releases before 0.13). Default: ``inferops.feature.node.kubernetes.io``.

What to publish (filter ``k8s_node_labels_plan``, the role ``k8s_node_labels``):

* ``expect_errors(expect, name)`` - the role's input;
* ``checks(expect, nvme, sysctl, triton)`` - each check on the results of ``nvme_info``, ``sysctl_info``
  and ``triton_info`` (nothing else is read): passed or not, why, and the labels a passed check publishes;
* ``plan(expect, nvme, sysctl, triton)`` - checks, labels (only from passed checks), errors.
* ``profile_hash(settings)`` - 16 hex digits of the sha256 of the sorted ``key=value`` lines.

The file (module ``nfd_feature_file``):

* ``render(labels, expiry)`` / ``parse(text)`` - NFD's format: ``# +expiry-time=<RFC 3339>`` (parsed by
  nfd-worker with Go's ``time.RFC3339``; it applies to the lines after it; once past, nfd-worker ignores
  them), then ``name=value`` lines;
* ``file_plan(text, labels, now, lifetime, refresh)`` - whether to rewrite: when the labels differ, the
  expiry is missing or unreadable, or less than ``refresh`` seconds of it remain. Otherwise the file is
  left alone, so a rerun is changed=0 and labels lapse ``lifetime - refresh`` to ``lifetime`` seconds
  after the last run.

The node health check (role node_health) on a worker:

* ``health_gate(text, hold, label, ready)`` - takes ``label`` (``triton-ready``) out of the role's file while
  the node is not ready and puts it back once it is - only what it took out, and only into the file it left.

Standard library only.
"""

from __future__ import annotations

import datetime
import hashlib
import re

from ansible_collections.inferops.node.plugins.module_utils.kernel import sysctl
from ansible_collections.inferops.node.plugins.module_utils.storage import nvme_common
from ansible_collections.inferops.node.plugins.module_utils.common.messages import shown
from ansible_collections.inferops.node.plugins.module_utils.common.numbers import as_int
from ansible_collections.inferops.node.plugins.module_utils.serving.triton_v2 import not_serving, url_errors

__all__ = [
    'DEFAULT_PREFIX', 'FEATURES_DIR', 'TRANSPORTS', 'checks', 'expect_errors', 'file_plan', 'format_time',
    'label_errors', 'label_name_errors', 'label_value_errors', 'lifetime_errors', 'parse', 'parse_time', 'plan',
    'prefix_errors', 'profile_hash', 'render', 'health_gate',
]

DEFAULT_PREFIX = 'inferops.feature.node.kubernetes.io'
FEATURES_DIR = '/etc/kubernetes/node-feature-discovery/features.d'
TRANSPORTS = ('tcp', 'rdma')
EXPIRY_DIRECTIVE = '# +expiry-time='
HEADER = ('# Managed by inferops.node (role k8s_node_labels): node labels for the checks that passed\n'
          '# on this host, read by node-feature-discovery (local source). Local edits are overwritten.\n')

_NAME_RE = re.compile(r'^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$')
_DNS_LABEL_RE = re.compile(r'^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')
_TIME_RE = re.compile(r'^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$')


# ---- label rules -------------------------------------------------------------------------------------

def _shape_errors(text, what):
    if len(text) > 63:
        return ['%s %s is %d characters long, at most 63 are allowed' % (what, shown(text), len(text))]
    if not _NAME_RE.match(text):
        return ['%s %s must be letters, digits, "-", "_" or "." and begin and end with a letter or digit'
                % (what, shown(text))]
    return []


def _subdomain_errors(prefix):
    if not prefix:
        return ['the prefix is empty']
    if len(prefix) > 253:
        return ['the prefix %s is %d characters long, at most 253 are allowed' % (shown(prefix), len(prefix))]
    if not all(len(part) <= 63 and _DNS_LABEL_RE.match(part) for part in prefix.split('.')):
        return ['the prefix %s must be a DNS subdomain: lower-case letters, digits, "-" and ".", each '
                'dot-separated part beginning and ending with a letter or digit' % shown(prefix)]
    return []


def label_name_errors(name):
    """Problems of a label name ``[prefix/]name`` by Kubernetes' rules (empty list = valid)."""
    if not isinstance(name, str):
        return ['the label name %s must be a string' % shown(name)]
    if name.count('/') > 1:
        return ['the label name %s holds more than one "/"' % shown(name)]
    prefix, _slash, short = name.rpartition('/')
    errors = _subdomain_errors(prefix) if _slash else []
    if not short:
        return errors + ['the label name %s has no name part' % shown(name)]
    return errors + _shape_errors(short, 'the name part')


def label_value_errors(value):
    """Problems of a label value by Kubernetes' rules (a string; empty is allowed)."""
    if not isinstance(value, str):
        return ['the label value %s must be a string' % shown(value)]
    if value == '':
        return []
    return _shape_errors(value, 'the label value')


def prefix_errors(prefix):
    """Problems of our label prefix: a DNS subdomain whose labels nfd-master publishes."""
    if not isinstance(prefix, str):
        return ['must be a string']
    errors = _subdomain_errors(prefix)
    if errors:
        return errors
    for allowed in ('feature.node.kubernetes.io', 'profile.node.kubernetes.io'):
        if prefix == allowed or prefix.endswith('.' + allowed):
            return []
    for denied in ('kubernetes.io', 'k8s.io'):
        if prefix == denied or prefix.endswith('.' + denied):
            return ['nfd-master never publishes labels in %s or its sub-namespaces (except feature.node.'
                    'kubernetes.io and profile.node.kubernetes.io and theirs); use e.g. %s'
                    % (denied, DEFAULT_PREFIX)]
    return []


def label_errors(labels):
    """Problems of a ``{name: value}`` dict, each starting with the name."""
    if not isinstance(labels, dict):
        return ['labels must be a mapping of label name to value, got %s' % shown(labels)]
    errors = []
    for name in sorted(labels, key=str):
        for problem in label_name_errors(name) + label_value_errors(labels[name]):
            errors.append('%s: %s' % (name, problem))
    return errors


def profile_hash(settings):
    """16 hex digits of the sha256 of ``key=value`` lines sorted by key: same settings, same label."""
    lines = ''.join('%s=%s\n' % (key, sysctl.normalize(settings[key])) for key in sorted(settings))
    return hashlib.sha256(lines.encode('utf-8')).hexdigest()[:16]


def lifetime_errors(expiry_hours, refresh_hours, expiry_name='expiry_hours', refresh_name='refresh_hours'):
    """The file's lifetime: at least an hour, refreshed 1 to ``expiry_hours`` hours before it ends."""
    expiry, refresh = as_int(expiry_hours), as_int(refresh_hours)
    if isinstance(expiry, bool) or not isinstance(expiry, int) or expiry < 1:
        return ['%s = %s: must be a whole number of hours, at least 1' % (expiry_name, shown(expiry_hours))]
    if isinstance(refresh, bool) or not isinstance(refresh, int) or not 1 <= refresh <= expiry:
        return ['%s = %s: must be a whole number of hours between 1 and %s (%d)'
                % (refresh_name, shown(refresh_hours), expiry_name, expiry)]
    return []


def _is_nqn(value):
    """The NQN rule of the NVMe-oF roles (module_utils/storage/nvme_common.py): what they connect to is what we check."""
    try:
        nvme_common.check_nqn(value, 'subnqn')
    except nvme_common.NvmeInputError:
        return False
    return True


# ---- the role's input --------------------------------------------------------------------------------

def expect_errors(expect, name='k8s_node_labels'):
    """Problems of the role's input (``prefix``, ``nvmeof_connections``, ``nvmeof_read_ahead_kb``, ``nvmeof_settle_seconds``,
    ``tuning_profile``, ``sysctl_file``, ``triton_endpoints``, ``triton_models``, and ``expiry_hours`` /
    ``refresh_hours`` when given), each naming ``<name>_<key>``, the value and the fix."""
    errors = []
    if 'expiry_hours' in expect or 'refresh_hours' in expect:
        errors += lifetime_errors(expect.get('expiry_hours', 24), expect.get('refresh_hours', 12),
                                  name + '_expiry_hours', name + '_refresh_hours')
    prefix = expect.get('prefix', DEFAULT_PREFIX)
    errors += ['%s_prefix = %s: %s' % (name, shown(prefix), p) for p in prefix_errors(prefix)]
    connections = expect.get('nvmeof_connections') or []
    if not isinstance(connections, list):
        errors.append('%s_nvmeof_connections = %s: must be a list' % (name, shown(connections)))
        connections = []
    for index, conn in enumerate(connections):
        where = '%s_nvmeof_connections[%d]' % (name, index)
        if not isinstance(conn, dict):
            errors.append('%s = %s: must be a mapping with subnqn and transport' % (where, shown(conn)))
            continue
        where += ' (subnqn=%s)' % conn.get('subnqn')
        if not _is_nqn(conn.get('subnqn')):
            errors.append('%s.subnqn = %s: must be an NQN (nqn.yyyy-mm.<domain>:...), the subsystem the host '
                          'connects to' % (where, shown(conn.get('subnqn'))))
        if conn.get('transport') not in TRANSPORTS:
            errors.append('%s.transport = %s: must be one of %s'
                          % (where, shown(conn.get('transport')), ', '.join(TRANSPORTS)))
    settle = as_int(expect.get('nvmeof_settle_seconds', 0))
    if isinstance(settle, bool) or not isinstance(settle, int) or settle < 0:
        errors.append('%s_nvmeof_settle_seconds = %s: must be a whole number of seconds, 0 or more (60: a minute '
                      'for a reconnect in progress)' % (name, shown(expect.get('nvmeof_settle_seconds', 0))))
    given_read_ahead = expect.get('nvmeof_read_ahead_kb')
    read_ahead = as_int(given_read_ahead)
    if read_ahead is not None and (isinstance(read_ahead, bool) or not isinstance(read_ahead, int) or read_ahead < 0):
        errors.append('%s_nvmeof_read_ahead_kb = %s: must be a whole number of KiB (4096 for 4 MiB) or null'
                      % (name, shown(given_read_ahead)))
    elif read_ahead is not None and not connections:
        errors.append('%s_nvmeof_read_ahead_kb = %s: the read-ahead is checked on the namespaces of '
                      '%s_nvmeof_connections, which is empty; list the connections or set it to null'
                      % (name, shown(read_ahead), name))
    profile = expect.get('tuning_profile')
    if profile is not None:
        errors += ['%s_tuning_profile = %s: %s' % (name, shown(profile), p) for p in label_value_errors(profile)]
        sysctl_file = expect.get('sysctl_file')
        if not isinstance(sysctl_file, str) or not sysctl_file.startswith('/'):
            errors.append('%s_sysctl_file = %s: must be the absolute path of the kernel_tuning drop-in'
                          % (name, shown(sysctl_file)))
    return errors + _triton_expect_errors(expect, name)


def _triton_expect_errors(expect, name):
    errors = []
    endpoints = expect.get('triton_endpoints') or []
    if not isinstance(endpoints, list):
        errors.append('%s_triton_endpoints = %s: must be a list of URLs' % (name, shown(endpoints)))
        endpoints = []
    for index, url in enumerate(endpoints):
        errors += ['%s_triton_endpoints[%d] = %s: %s (e.g. http://127.0.0.1:8000)' % (name, index, shown(url), p)
                   for p in url_errors(url)]
    models = expect.get('triton_models') or []
    if not isinstance(models, list) or not all(isinstance(model, str) and model for model in models):
        errors.append('%s_triton_models = %s: must be a list of model names' % (name, shown(models)))
    elif models and not endpoints:
        errors.append('%s_triton_models = %s: the models are checked on the endpoints of %s_triton_endpoints, '
                      'which is empty; list the endpoints or leave the models out' % (name, shown(models), name))
    return errors


# ---- checks on the info modules' results -------------------------------------------------------------

def _check(name, passed, reason, labels):
    return {'name': name, 'passed': passed, 'reason': reason, 'labels': labels if passed else {}}


def _fabric_checks(expect, nvme):
    connections = expect.get('nvmeof_connections') or []
    if not connections:
        return []
    controllers = (nvme or {}).get('controllers') or []
    namespaces = dict((ns.get('name'), ns) for ns in (nvme or {}).get('namespaces') or [])
    problems = []
    heads = set()
    for conn in connections:
        live = [c for c in controllers if c.get('subsysnqn') == conn['subnqn'] and c.get('state') == 'live'
                and c.get('transport') == conn['transport']]
        if not live:
            seen = ['%s %s %s' % (c.get('name'), c.get('transport'), c.get('state'))
                    for c in controllers if c.get('subsysnqn') == conn['subnqn']]
            problems.append('%s: no live %s controller (%s)'
                            % (conn['subnqn'], conn['transport'], ', '.join(seen) or 'not connected'))
        for ctrl in live:
            # nvme_info names each controller's namespace block devices, multipath heads included.
            heads.update(ctrl.get('namespaces') or [])
    transports = sorted(set(conn['transport'] for conn in connections))
    labels = {'nvmeof-connected': 'true'}
    if len(transports) == 1:
        labels['nvmeof-transport'] = transports[0]
    result = [_check('nvmeof_connected', not problems, '; '.join(problems) or
                     '%d subsystem(s) live on the expected transport' % len(connections), labels)]
    want = as_int(expect.get('nvmeof_read_ahead_kb'))
    if want is not None:
        wrong = []
        for head in sorted(heads):
            got = ((namespaces.get(head) or {}).get('queue') or {}).get('read_ahead_kb')
            if got != want:
                wrong.append('%s read_ahead_kb %s' % (head, shown(got)))
        ok = not problems and bool(heads) and not wrong
        reason = ('; '.join(problems + wrong) if problems or wrong else
                  'no namespace on the live controllers' if not heads else
                  '%d namespace(s) at %d KiB' % (len(heads), want))
        result.append(_check('nvmeof_read_ahead', ok, reason, {'nvmeof-read-ahead-kb': str(want)}))
    passed = all(check['passed'] for check in result)
    result.append(_check('storage_profile', passed,
                         'every NVMe-oF check passed' if passed else 'an NVMe-oF check failed',
                         {'storage-profile': 'nvmeof'}))
    return result


def _sysctl_check(expect, info):
    profile = expect.get('tuning_profile')
    if profile is None:
        return []
    path = expect.get('sysctl_file')
    info = info or {}
    dropin = [f for f in info.get('files') or [] if f.get('path') == path]
    if not dropin or not dropin[0].get('readable') or not dropin[0].get('settings'):
        return [_check('tuning_profile', False, '%s: missing, unreadable or empty (sysctl_info files)' % path, {})]
    settings = dropin[0]['settings']
    values = info.get('parameters') or {}
    set_by = info.get('set_by') or {}
    wrong = []
    for key in sorted(settings):
        runtime = values.get(key)
        if key not in values:
            wrong.append('%s not read (pass the drop-in keys to sysctl_info names)' % key)
        elif sysctl.differs(runtime, settings[key]):
            wrong.append('%s is %s at runtime, the drop-in sets %s' % (key, shown(runtime), shown(settings[key])))
        elif (set_by.get(key) or {}).get('file') != path:
            wrong.append('%s is set at boot by %s, after the drop-in' % (key, set_by.get(key, {}).get('file')))
    labels = {'tuning-profile': profile, 'tuning-profile-hash': profile_hash(settings)}
    return [_check('tuning_profile', not wrong, '; '.join(wrong) or
                   '%d parameter(s) of %s live at runtime and at boot' % (len(settings), path), labels)]


def _triton_check(expect, triton):
    endpoints = expect.get('triton_endpoints') or []
    if not endpoints:
        return []
    models = expect.get('triton_models') or []
    problems = not_serving(triton, endpoints, models)
    return [_check('triton_ready', not problems, '; '.join(problems) or
                   '%d endpoint(s) ready, with %d model(s) ready on each' % (len(endpoints), len(models)),
                   {'triton-ready': 'true'})]


def checks(expect, nvme=None, sysctl=None, triton=None):
    """Each check: ``{name, passed, reason, labels}`` (labels empty when it did not pass)."""
    return _fabric_checks(expect, nvme) + _sysctl_check(expect, sysctl) + _triton_check(expect, triton)


def plan(expect, nvme=None, sysctl=None, triton=None):
    """``{checks, labels, failed, errors}``: labels (``prefix/name: value``) only from passed checks."""
    errors = expect_errors(expect)
    if errors:
        return {'checks': [], 'labels': {}, 'failed': [], 'errors': errors}
    prefix = expect.get('prefix', DEFAULT_PREFIX)
    done = checks(expect, nvme, sysctl, triton)
    labels = {}
    for check in done:
        for key, value in check['labels'].items():
            labels['%s/%s' % (prefix, key)] = value
    errors = label_errors(labels)
    return {'checks': done, 'labels': labels, 'failed': [c['name'] for c in done if not c['passed']],
            'errors': errors}


# ---- the feature file --------------------------------------------------------------------------------

def format_time(moment):
    """RFC 3339 in UTC, whole seconds (``2026-12-03T02:00:00Z``), as Go's ``time.RFC3339`` parses it."""
    return moment.astimezone(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ')


def parse_time(text):
    """An aware datetime from RFC 3339 text, None when Go's ``time.RFC3339`` would refuse it."""
    match = _TIME_RE.match(text.strip())
    if not match:
        return None
    year, month, day, hour, minute, second = (int(g) for g in match.groups()[:6])
    zone = match.group(8)
    if zone in ('Z', 'z'):
        tz = datetime.timezone.utc
    else:
        sign = -1 if zone[0] == '-' else 1
        tz = datetime.timezone(sign * datetime.timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6])))
    try:
        return datetime.datetime(year, month, day, hour, minute, second, tzinfo=tz)
    except ValueError:
        return None


def render(labels, expiry):
    """The file: header, the expiry directive (before every label, which it applies to), sorted labels."""
    lines = [HEADER, EXPIRY_DIRECTIVE + format_time(expiry) + '\n']
    lines.extend('%s=%s\n' % (name, labels[name]) for name in sorted(labels))
    return ''.join(lines)


def parse(text):
    """``{'expiry': datetime or None, 'labels': {name: value}}`` of a feature file (None: no file).

    The last expiry directive counts (nfd-worker applies each to the lines after it; ours has one).
    """
    if text is None:
        return {'expiry': None, 'labels': {}}
    expiry = None
    labels = {}
    for line in text.splitlines():
        line = line.strip()
        if line.startswith(EXPIRY_DIRECTIVE):
            expiry = parse_time(line[len(EXPIRY_DIRECTIVE):])
        elif line and not line.startswith('#'):
            name, sep, value = line.partition('=')
            labels[name] = value if sep else 'true'
    return {'expiry': expiry, 'labels': labels}


def file_plan(text, labels, now, lifetime, refresh):
    """Whether to (re)write the file and with what: ``{changed, reason, content, expiry, before}``.

    ``lifetime`` - seconds from now the labels stay valid when written; ``refresh`` - rewrite once
    fewer than this many seconds remain (0 < refresh <= lifetime).
    """
    before = parse(text)
    remaining = (before['expiry'] - now).total_seconds() if before['expiry'] else None
    if text is None:
        reason = 'no file yet'
    elif before['labels'] != labels:
        reason = 'labels changed'
    elif remaining is None:
        reason = 'no readable expiry time'
    elif remaining < refresh:
        reason = 'expiry in %ds, under the refresh margin of %ds' % (remaining, refresh)
    else:
        return {'changed': False, 'reason': 'up to date, expires in %ds' % remaining, 'content': text,
                'expiry': before['expiry'], 'before': before}
    expiry = now + datetime.timedelta(seconds=lifetime)
    return {'changed': True, 'reason': reason, 'content': render(labels, expiry), 'expiry': expiry,
            'before': before}


def health_gate(text, hold, label, ready):
    """What the node health check does to the feature file ``text`` (None: no file) at the end of a run:
    ``{'action', 'content', 'hold'}`` - ``content`` the file to write (None: leave it), ``hold`` what to keep
    until the node is ready again (None: no hold; ``{'label', 'value', 'file'}``).

    Not ready, and the file publishes ``label`` with an expiry: the label leaves the file (``removed``); the
    expiry stays the role's, so the check never makes a label last longer than the role's verification.
    Ready with a hold: the label comes back (``restored``) when the file is still the one the check left; a file
    rewritten since (k8s_node_labels ran again and decided on its own checks) drops the hold instead."""
    parsed = parse(text)
    labels = dict(parsed['labels'])
    if not ready:
        if text is None or label not in labels or parsed['expiry'] is None:
            return {'action': 'held' if hold else 'unchanged', 'content': None, 'hold': hold}
        value = labels.pop(label)
        content = render(labels, parsed['expiry'])
        return {'action': 'removed', 'content': content, 'hold': {'label': label, 'value': value, 'file': content}}
    if not hold:
        return {'action': 'unchanged', 'content': None, 'hold': None}
    if text != hold.get('file') or parsed['expiry'] is None:
        return {'action': 'hold dropped: the feature file was rewritten since', 'content': None, 'hold': None}
    labels[hold['label']] = hold['value']
    return {'action': 'restored', 'content': render(labels, parsed['expiry']), 'hold': None}
