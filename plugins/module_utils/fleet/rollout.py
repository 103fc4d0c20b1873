# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fleet rollout: the operator's settings, the wave plan, the failure budget and the resumable state.

Used on the controller by the ``rollout_plan`` / ``rollout_record`` filters (``playbooks/rollout.yml``).

* ``settings(values)`` - the ``inferops_rollout_*`` variables with their defaults, and every problem
  (``variable[index] = value: reason; fix``), unknown ``inferops_rollout_*`` names included.
* ``plan(fleet, values, hostvars, groups, state_text, sites)`` - canary wave(s): one pending host per
  failure domain not yet covered by a done host, never more than the maximum wave; then the configured
  waves (host counts or percentages of the fleet, the last one repeated), each capped by the maximum; a
  resumed rollout leaves the done hosts out and retries the hosts that failed first. Several site groups
  in one rollout (``nvmeof_targets:nvmeof_initiators``) are planned in tiers: a group rolls out after the
  groups it depends on (``DEPENDS_ON``: the NVMe-oF initiators on their targets), canaries and waves per
  tier, and no wave mixes two tiers. A host in ``LABELS_GROUP`` (the Kubernetes workers) converges its
  node labels last, so that they describe what the rollout left.
* ``record(plan, wave, outcomes)`` - the state after a wave, from the plan's (done hosts, failed hosts
  with their step, the halt with the hosts left untouched) and whether the rollout halts: a failed
  canary, or more failed hosts than the budget allows over the whole rollout (ansible's
  max_fail_percentage counts one batch only), or a tier that ends with a failed host while a later tier
  depends on it.
* ``parse_state(text, path, group)`` - the state file's contents checked (format, group).
* ``audit_gate_errors(results, severities)`` - the verify gate on the node audit's results of a host
  (``audit_host``): every FAIL of a gated severity, with the check's reason and fix.
* ``warmup_gate_errors(warmup_result, bound)`` - the verify gate on the warmup role's results of a host
  (``warmup_result.traffic``, from ``triton_warmup``): every endpoint and model whose warm-up P99 is
  above the bound.

Standard library only.
"""

from __future__ import annotations

import json
import math
import re

from ansible.module_utils.parsing.convert_bool import boolean

from ansible_collections.inferops.node.plugins.module_utils.audit.check import SEVERITIES
from ansible_collections.inferops.node.plugins.module_utils.common.messages import shown

__all__ = ['DEFAULTS', 'DEPENDS_ON', 'LABELS_GROUP', 'STATE_FORMAT', 'audit_gate_errors', 'parse_state', 'plan',
           'record', 'settings', 'size', 'tag_errors', 'warmup_bound', 'warmup_gate_errors']

STATE_FORMAT = 'inferops.node.rollout/1'

DEFAULTS = {
    'inferops_rollout_group': None,
    'inferops_rollout_state_file': None,
    'inferops_rollout_waves': [1, '10%', '50%', '100%'],
    'inferops_rollout_max_wave': '20%',
    'inferops_rollout_failure_budget': 0,
    'inferops_rollout_canary': True,
    'inferops_rollout_domain_var': 'inferops_failure_domain',
    'inferops_rollout_domain_group_prefix': None,
    'inferops_rollout_drain_tasks': None,
    'inferops_rollout_undrain_tasks': None,
    'inferops_rollout_verify_tasks': None,
    'inferops_rollout_audit_severities': ['critical', 'major'],
    'inferops_rollout_warmup_p99_ms': 1000,
}

# Site groups that must not change while a group they depend on is changing: an
# NVMe-oF initiator converged (reconnected, remounted) while its target is
# mid-change would mount a pool that is being re-exported. In a rollout of both
# groups the targets' tier goes first, whole; the initiators start once every
# target is done (what kubespray's upgrade does with etcd and the control plane
# before the workers).
DEPENDS_ON = {'nvmeof_initiators': ('nvmeof_targets',)}

# The group whose role labels a Kubernetes worker with what was verified on it (fabric connected,
# read-ahead, kernel profile, Triton ready). A host of the rollout that is in it converges that role
# last, whether the rollout names the group or not: the labels describe what the host's other roles
# leave, and a rollout of the initiators alone would otherwise keep vouching, until the labels expire
# (24 h), for a fabric, read-ahead or profile the rollout just changed or left disconnected.
LABELS_GROUP = 'k8s_workers'

_PERCENT = re.compile(r'^\s*(\d+(?:\.\d+)?)\s*%\s*$')
_COUNT = re.compile(r'^\s*(\d+)\s*$')


def _problem(name, value, reason):
    return '%s = %s: %s' % (name, shown(value), reason)


def _size_spec(name, value, minimum):
    """('count', n) or ('percent', p), or a problem message."""
    if isinstance(value, bool):
        return None, _problem(name, value, 'a boolean is not a host count; use a whole number (2) or a '
                                           'percentage of the fleet ("10%")')
    if isinstance(value, int) or (isinstance(value, str) and _COUNT.match(value)):
        count = int(value)
        if count < minimum:
            return None, _problem(name, value, 'must be at least %d host(s); use %d or more, or a percentage '
                                               'of the fleet ("10%%")' % (minimum, minimum))
        return ('count', count), None
    if isinstance(value, str) and _PERCENT.match(value):
        percent = float(_PERCENT.match(value).group(1))
        if percent > 100 or (minimum > 0 and percent == 0):
            return None, _problem(name, value, 'a percentage must be %s and at most 100%%; use e.g. "10%%"'
                                               % ('0 or more' if minimum == 0 else 'above 0'))
        return ('percent', percent), None
    return None, _problem(name, value, 'not a host count or a percentage; use a whole number of hosts (2) or a '
                                       'percentage of the fleet ("10%")')


def size(spec, fleet, rounding='up', minimum=1):
    """Hosts meant by a ('count', n) or ('percent', p) spec in a fleet of ``fleet`` hosts."""
    kind, number = spec
    if kind == 'count':
        return number
    exact = number * fleet / 100.0
    hosts = int(math.ceil(exact - 1e-9)) if rounding == 'up' else int(math.floor(exact + 1e-9))
    return max(minimum, hosts)


def _boolean(name, value, problems):
    """Ansible's own conversion (true, "yes", "on", 1, ...); a problem, and true, for anything else."""
    try:
        return boolean(value, strict=True)
    except TypeError:
        problems.append(_problem(name, value, 'not a boolean; use true or false'))
        return True


def _optional_text(name, value, problems, what):
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        problems.append(_problem(name, value, 'must be %s (a non-empty string) or unset' % what))
        return None
    return value


def settings(values):
    """(normalised settings, problems) of the operator's inferops_rollout_* variables."""
    values = dict(values or {})
    problems = []
    for name in sorted(values):
        if name not in DEFAULTS:
            known = ', '.join(sorted(DEFAULTS))
            problems.append(_problem(name, values[name], 'not a rollout variable (misspelt?); the rollout knows '
                                                         '%s' % known))
    merged = dict(DEFAULTS)
    merged.update({key: value for key, value in values.items() if key in DEFAULTS and value is not None})
    out = {}

    for name in ('inferops_rollout_group', 'inferops_rollout_state_file'):
        value = merged[name]
        if not isinstance(value, str) or not value.strip():
            fix = ('the inventory group to roll out, e.g. -e inferops_rollout_group=local_nvme'
                   if name == 'inferops_rollout_group' else
                   'a file on the controller that records the rollout, e.g. '
                   '-e inferops_rollout_state_file=/var/lib/inferops/rollout-local_nvme.json')
            problems.append(_problem(name, value, 'required; set %s' % fix))
        elif name == 'inferops_rollout_state_file' and not value.startswith('/'):
            # A relative path would mean different files to the tasks that read and write it (search paths).
            problems.append(_problem(name, value, 'must be an absolute path on the controller, e.g. '
                                                  '/var/lib/inferops/rollout-local_nvme.json'))
        out[name] = value

    waves = merged['inferops_rollout_waves']
    out['inferops_rollout_waves'] = []
    if not isinstance(waves, list) or not waves:
        problems.append(_problem('inferops_rollout_waves', waves,
                                 'must be a non-empty list of wave sizes; use e.g. [1, "10%", "50%", "100%"]'))
    else:
        for index, wave in enumerate(waves):
            spec, problem = _size_spec('inferops_rollout_waves[%d]' % index, wave, 1)
            if problem:
                problems.append(problem)
            else:
                out['inferops_rollout_waves'].append(spec)

    spec, problem = _size_spec('inferops_rollout_max_wave', merged['inferops_rollout_max_wave'], 1)
    if problem:
        problems.append(problem)
    out['inferops_rollout_max_wave'] = spec
    spec, problem = _size_spec('inferops_rollout_failure_budget', merged['inferops_rollout_failure_budget'], 0)
    if problem:
        problems.append(problem)
    out['inferops_rollout_failure_budget'] = spec

    out['inferops_rollout_canary'] = _boolean('inferops_rollout_canary', merged['inferops_rollout_canary'],
                                              problems)
    out['inferops_rollout_domain_var'] = _optional_text(
        'inferops_rollout_domain_var', merged['inferops_rollout_domain_var'], problems, 'a host variable name')
    out['inferops_rollout_domain_group_prefix'] = _optional_text(
        'inferops_rollout_domain_group_prefix', merged['inferops_rollout_domain_group_prefix'], problems,
        'the prefix of the failure-domain groups (rack_)')
    for name in ('inferops_rollout_drain_tasks', 'inferops_rollout_undrain_tasks', 'inferops_rollout_verify_tasks'):
        out[name] = _optional_text(name, merged[name], problems, 'the path of a task file')
    severities = merged['inferops_rollout_audit_severities']
    out['inferops_rollout_audit_severities'] = []
    if not isinstance(severities, list):
        problems.append(_problem('inferops_rollout_audit_severities', severities,
                                 'must be a list of audit severities (%s), [] for no audit gate'
                                 % ', '.join(SEVERITIES)))
    else:
        for index, severity in enumerate(severities):
            if severity not in SEVERITIES:
                problems.append(_problem('inferops_rollout_audit_severities[%d]' % index, severity,
                                         'not an audit severity; use %s' % ', '.join(SEVERITIES)))
            else:
                out['inferops_rollout_audit_severities'].append(severity)
    bound, bound_problems = warmup_bound(merged['inferops_rollout_warmup_p99_ms'])
    problems.extend(bound_problems)
    out['inferops_rollout_warmup_p99_ms'] = bound
    return out, problems


def _milliseconds(value):
    """A positive number of milliseconds (float), or None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None
    if isinstance(value, (int, float)) and value > 0 and not math.isinf(value):
        return float(value)
    return None


def warmup_bound(value):
    """({'*': ms, model: ms}, problems) of inferops_rollout_warmup_p99_ms ({} when off: false)."""
    problems = []
    name = 'inferops_rollout_warmup_p99_ms'
    fix = ('use the highest warm-up P99 in milliseconds a host may show (250), a dict of model: milliseconds '
           'with "*" for the other models ({"llama": 800, "*": 100}), or false for no warm-up bound')
    # Off by false only: a 0 or "0" is more likely a slip than a wish for no bound.
    if value is False or (isinstance(value, str) and value.strip().lower() in ('false', 'no', 'off')):
        return {}, problems
    if isinstance(value, dict):
        bound = {}
        for model in sorted(value, key=str):
            number = _milliseconds(value[model])
            if number is None:
                problems.append(_problem('%s[%s]' % (name, shown(model)), value[model],
                                         'not a number of milliseconds above 0; ' + fix))
            else:
                bound[str(model)] = number
        return bound, problems
    number = _milliseconds(value)
    if number is None:
        problems.append(_problem(name, value, 'not a number of milliseconds above 0; ' + fix))
        return {}, problems
    return {'*': number}, problems


def domains_of(fleet, hostvars, groups, conf):
    """({host: domain}, problems): each host's failure domain, from a group prefix or a host variable."""
    prefix = conf['inferops_rollout_domain_group_prefix']
    var = conf['inferops_rollout_domain_var']
    found, problems = {}, []
    if prefix:
        for host in fleet:
            names = sorted(name for name, members in (groups or {}).items()
                           if name.startswith(prefix) and host in (members or []))
            if len(names) > 1:
                problems.append(_problem('inferops_rollout_domain_group_prefix', prefix,
                                         '%s is in %d failure-domain groups (%s); put each host in exactly one'
                                         % (host, len(names), ', '.join(names))))
            found[host] = names[0] if names else None
        missing = [host for host in fleet if found[host] is None]
        if missing:
            problems.append(_problem('inferops_rollout_domain_group_prefix', prefix,
                                     'no group starting with it holds %s; add each host to one %s* group'
                                     % (', '.join(missing), prefix)))
        return found, problems
    if not var:
        return {host: None for host in fleet}, problems
    for host in fleet:
        own = (hostvars or {}).get(host) or {}
        found[host] = own.get(var) if var in own else None
    unset = [host for host in fleet if found[host] is None]
    if unset and len(unset) < len(fleet):
        problems.append(_problem('inferops_rollout_domain_var', var,
                                 '%s set on some hosts but not on %s; set it on every host of the fleet '
                                 '(host_vars or group_vars), or on none' % (var, ', '.join(unset))))
    for host in fleet:
        if found[host] is not None and not isinstance(found[host], (str, int)):
            problems.append(_problem('%s (host %s)' % (var, host), found[host],
                                     'a failure domain must be a name (rack7) or a number'))
            found[host] = str(found[host])
    return {host: (None if value is None else str(value)) for host, value in found.items()}, problems


def parse_state(text, path, group):
    """(state dict, problems) of a state file's text; empty or missing text is a fresh rollout."""
    fresh = {'format': STATE_FORMAT, 'group': group, 'done': [], 'failed': {}, 'halted': None, 'waves': []}
    if text is None or (isinstance(text, str) and not text.strip()):
        return fresh, []
    if isinstance(text, dict):
        state = text
    else:
        try:
            state = json.loads(text)
        except ValueError as exc:
            return fresh, [_problem('inferops_rollout_state_file', path,
                                    'not a rollout state (JSON: %s); point it at a rollout state file or a '
                                    'new path, or remove the file to start over' % exc)]
    if not isinstance(state, dict) or state.get('format') != STATE_FORMAT:
        return fresh, [_problem('inferops_rollout_state_file', path,
                                'not a rollout state (format is not %s); point it at a new path' % STATE_FORMAT)]
    if state.get('group') != group:
        return fresh, [_problem('inferops_rollout_state_file', path,
                                'records a rollout of group %s, not %s; use one state file per group'
                                % (shown(state.get('group')), shown(group)))]
    out = dict(fresh)
    out['done'] = [str(host) for host in state.get('done') or []]
    out['failed'] = dict(state.get('failed') or {})
    out['halted'] = state.get('halted')
    out['waves'] = list(state.get('waves') or [])
    return out, []


def _chunks(hosts, width):
    return [hosts[start:start + width] for start in range(0, len(hosts), width)]


def tag_errors(run_tags, skip_tags):
    """The rollout refuses --tags / --skip-tags: it would record as done a host whose roles were skipped."""
    problems = []
    run = [str(tag) for tag in (run_tags or ['all'])]
    skip = [str(tag) for tag in (skip_tags or [])]
    if run != ['all'] or skip:
        shown_tags = ' '.join((['--tags ' + ','.join(run)] if run != ['all'] else [])
                              + (['--skip-tags ' + ','.join(skip)] if skip else []))
        problems.append('%s: the rollout converges every role of the site and records each host as done; run it '
                        'without --tags/--skip-tags (site.yml --tags <role> reruns one concern)' % shown_tags)
    return problems


def _depth(name, names, seen=()):
    """A site group's tier in a rollout of ``names``: 0, or one more than the deepest group it depends on."""
    below = [other for other in DEPENDS_ON.get(name, ()) if other in names and other not in seen]
    return max([_depth(other, names, seen + (name,)) + 1 for other in below] or [0])


def _depends(name, other, seen=()):
    """Whether site group ``name`` depends on ``other``, directly or through another group."""
    direct = DEPENDS_ON.get(name, ())
    return other in direct or any(_depends(below, other, seen + (name,)) for below in direct if below not in seen)


def _site_groups(group, fleet, groups, sites, problems):
    """(site groups in tier order, {host: tier}, {host: roles}) of ``inferops_rollout_group`` (``a`` or ``a:b``).

    Groups of one tier, and a host's roles, follow the order of ``sites`` (the site playbooks' order); a host
    in ``LABELS_GROUP`` ends with that group's roles, named in the rollout or not.
    """
    named = []
    for name in (part.strip() for part in group.split(':')):
        if name and name not in named:
            named.append(name)
    unknown = [name for name in named if name not in sites]
    if unknown or not named:
        problems.append(_problem('inferops_rollout_group', group, 'not a site group%s; use one of %s, or several '
                                 'joined with ":" (nvmeof_targets:nvmeof_initiators)' % (
                                     ' (%s)' % ', '.join(unknown) if unknown else '', ', '.join(sorted(sites)))))
        return named, {}, {}
    site_order = list(sites)
    ordered = sorted(named, key=lambda name: (_depth(name, named), site_order.index(name)))
    tier_of, roles_of = {}, {}
    for host in fleet:
        mine = ordered if len(ordered) == 1 else [name for name in site_order
                                                  if name in named and host in ((groups or {}).get(name) or [])]
        clash = [(name, other) for name in mine for other in mine if _depends(name, other)]
        if clash:
            problems.append(_problem('inferops_rollout_group', group, '%s is in %s and in %s, which it depends on: '
                                     'it would change before and after itself; roll them out one at a time, or '
                                     'take %s out of one of them' % (host, clash[0][0], clash[0][1], host)))
            continue
        tier_of[host] = max([_depth(name, named) for name in mine] or [0])
        roles_of[host] = []
        for name in mine:
            roles_of[host].extend(role for role in sites[name] if role not in roles_of[host])
        if LABELS_GROUP in sites and host in ((groups or {}).get(LABELS_GROUP) or []):
            # Last, also when the rollout does not name the group or names it beside a later one.
            labels = list(sites[LABELS_GROUP])
            roles_of[host] = [role for role in roles_of[host] if role not in labels] + labels
    return ordered, tier_of, roles_of


def plan(fleet, values, hostvars=None, groups=None, state_text=None, sites=None, run_tags=None, skip_tags=None):
    """The rollout plan (dict); ``errors`` lists every problem and the plan is empty when there is one.

    ``sites`` maps each site group to the roles its site playbook runs, in the site playbooks' order; the
    group must be one of them, or several joined with ``:`` (their hosts are found in ``groups``), each host
    converging the roles of its groups in that order.
    ``run_tags`` / ``skip_tags``: Ansible's ``ansible_run_tags`` / ``ansible_skip_tags`` (refused unless none).
    """
    conf, problems = settings(values)
    problems.extend(tag_errors(run_tags, skip_tags))
    fleet = [str(host) for host in (fleet or [])]
    group = conf['inferops_rollout_group']
    result = {'errors': problems, 'group': group, 'state_file': conf['inferops_rollout_state_file'],
              'fleet': fleet, 'done': [], 'pending': [], 'retried': [], 'waves': [], 'serial': [], 'order': [],
              'max_wave': None, 'budget': None, 'domains': {}, 'settings': conf, 'state': None, 'summary': '',
              'roles': [], 'host_roles': {}, 'tiers': []}
    if problems:
        return result
    tier_of = {host: 0 for host in fleet}
    tiers = [[group]]
    if sites is not None:
        ordered, tier_of, roles_of = _site_groups(group, fleet, groups, sites, problems)
        if problems:
            return result
        group = ':'.join(ordered)
        # A tier is named by the groups of its hosts: a host in a group that depends on nothing
        # (k8s_workers) and in one that does (nvmeof_initiators) rolls in the later tier, and a tier
        # without hosts (--limit) by the groups of its depth.
        members = {name: (groups or {}).get(name) or [] for name in ordered}
        tiers = [[name for name in ordered if any(tier_of.get(host) == depth for host in members[name])]
                 or [name for name in ordered if _depth(name, ordered) == depth]
                 for depth in sorted({_depth(name, ordered) for name in ordered})]
        result.update({'group': group, 'host_roles': roles_of,
                       'roles': [role for name in ordered for role in sites[name]]})
    if not fleet:
        problems.append(_problem('inferops_rollout_group', group, 'no host of the inventory (or of --limit) is in '
                                                                  'this group; name a group with hosts'))
        return result
    state, state_problems = parse_state(state_text, conf['inferops_rollout_state_file'], group)
    domains, domain_problems = domains_of(fleet, hostvars, groups, conf)
    problems.extend(state_problems + domain_problems)
    if problems:
        return result

    count = len(fleet)
    max_wave = size(conf['inferops_rollout_max_wave'], count, rounding='down', minimum=1)
    budget = size(conf['inferops_rollout_failure_budget'], count, rounding='down', minimum=0)
    done = [host for host in fleet if host in state['done']]
    retried = [host for host in fleet if host in state['failed'] and host not in done]
    pending = retried + [host for host in fleet if host not in done and host not in retried]

    waves = []
    for tier in range(len(tiers)):
        # Each tier is rolled out as a fleet of its own: canaries for its domains, then growing waves.
        mine = [host for host in pending if tier_of[host] == tier]
        if conf['inferops_rollout_canary'] and mine:
            seen = {domains[host] for host in done if tier_of[host] == tier}
            canary = []
            for host in mine:
                if domains[host] not in seen:
                    seen.add(domains[host])
                    canary.append(host)
            waves.extend({'hosts': chunk, 'canary': True, 'tier': tier} for chunk in _chunks(canary, max_wave))
        rest = [host for host in mine if not any(host in wave['hosts'] for wave in waves)]
        specs = conf['inferops_rollout_waves']
        index = 0
        while rest:
            spec = specs[min(index, len(specs) - 1)]
            width = min(size(spec, count, rounding='up', minimum=1), max_wave)
            waves.append({'hosts': rest[:width], 'canary': False, 'tier': tier})
            rest = rest[width:]
            index += 1
    for number, wave in enumerate(waves):
        wave['index'] = number
    result.update({
        'done': done, 'pending': pending, 'retried': retried, 'waves': waves,
        'serial': [len(wave['hosts']) for wave in waves],
        'order': [[host, wave['index']] for wave in waves for host in wave['hosts']],
        'max_wave': max_wave, 'budget': budget, 'domains': domains, 'state': state,
        'tiers': [{'index': tier, 'groups': names, 'hosts': [host for host in fleet if tier_of[host] == tier]}
                  for tier, names in enumerate(tiers)],
    })
    result['summary'] = _summary(result)
    return result


def _summary(result):
    if not result['waves']:
        return 'rollout of %s: all %d host(s) done already (%s); nothing to do' % (
            result['group'], len(result['fleet']), result['state_file'])
    tiered = len(result['tiers']) > 1
    parts = ['wave %d%s: %s' % (
        wave['index'] + 1,
        ' (%s)' % ', '.join((['canary'] if wave['canary'] else [])
                            + ([':'.join(result['tiers'][wave['tier']]['groups'])] if tiered else []))
        if wave['canary'] or tiered else '',
        ', '.join(wave['hosts'])) for wave in result['waves']]
    head = 'rollout of %s: %d host(s), %d done before, %d in %d wave(s) of at most %d; failure budget %d host(s)' % (
        result['group'], len(result['fleet']), len(result['done']), len(result['pending']), len(result['waves']),
        result['max_wave'], result['budget'])
    if tiered:
        head += '; %s, each whole before the next starts' % ' before '.join(
            ':'.join(tier['groups']) for tier in result['tiers'])
    if result['retried']:
        head += '; retried first: %s' % ', '.join(result['retried'])
    return head + '. ' + '; '.join(parts)


MESSAGE_LIMIT = 600


def _outcome(raw):
    """{'ok': bool, 'step', 'task', 'message'} of a host's recorded outcome (None: the host reported nothing)."""
    if not isinstance(raw, dict):
        return {'ok': False, 'step': 'unknown', 'task': None,
                'message': 'no outcome recorded (unreachable, or failed outside the rollout steps)'}
    ok = raw.get('ok') is True
    return {'ok': ok, 'step': None if ok else str(raw.get('step') or 'unknown'),
            'task': raw.get('task'), 'message': '' if ok else _shorten(str(raw.get('message') or ''))}


def _shorten(message):
    # The state file and the halt message stay readable; the task's full output is in the run's log.
    return message if len(message) <= MESSAGE_LIMIT else message[:MESSAGE_LIMIT] + '...'


def record(the_plan, wave, outcomes):
    """{state, halt, message, failed, done} after wave number ``wave`` (0-based) of ``the_plan``."""
    waves = the_plan['waves']
    if not isinstance(wave, int) or isinstance(wave, bool) or not 0 <= wave < len(waves):
        raise ValueError('wave %r is not a wave of this plan (0-%d)' % (wave, len(waves) - 1))
    state = json.loads(json.dumps(the_plan['state']))
    hosts = waves[wave]['hosts']
    passed, failed_now = [], []
    for host in hosts:
        outcome = _outcome((outcomes or {}).get(host))
        if outcome['ok']:
            passed.append(host)
            state['failed'].pop(host, None)
            if host not in state['done']:
                state['done'].append(host)
        else:
            failed_now.append(host)
            state['failed'][host] = {'wave': wave + 1, 'step': outcome['step'], 'task': outcome['task'],
                                     'message': outcome['message']}
    # A host that left the inventory no longer counts against the budget.
    failed_total = [host for host in the_plan['fleet'] if host in state['failed']]
    later = [host for later_wave in waves[wave + 1:] for host in later_wave['hosts']]
    canary_failed = waves[wave]['canary'] and failed_now
    over_budget = len(failed_total) > the_plan['budget']
    halt = bool(canary_failed or over_budget) and bool(failed_now)
    # The last wave of a tier that leaves a host of it failed (within the budget) halts too when a
    # later tier depends on it: no initiator is converged while its target is mid-change.
    tier = waves[wave].get('tier', 0)
    tiers = the_plan.get('tiers') or []
    tier_failed = []
    if not halt and later and waves[wave + 1].get('tier', 0) != tier and tier < len(tiers):
        tier_failed = [host for host in tiers[tier]['hosts'] if host in state['failed']]
        halt = bool(tier_failed)
    state['waves'].append({'wave': wave + 1, 'canary': waves[wave]['canary'], 'hosts': hosts,
                           'passed': passed, 'failed': failed_now})
    state['halted'] = None
    lines = ['%s failed at step %s%s%s' % (
        host, state['failed'][host]['step'],
        ' (task "%s")' % state['failed'][host]['task'] if state['failed'][host]['task'] else '',
        ': %s' % state['failed'][host]['message'] if state['failed'][host]['message'] else '')
        for host in failed_now]
    if halt:
        if canary_failed:
            reason = 'a canary host failed'
        elif over_budget:
            reason = '%d failed host(s) exceed the failure budget of %d' % (len(failed_total), the_plan['budget'])
        else:
            reason = '%s not all done (failed: %s), and %s must not start while a host it depends on is mid-change' % (
                ':'.join(tiers[tier]['groups']), ', '.join(tier_failed),
                ':'.join(tiers[waves[wave + 1]['tier']]['groups']))
        state['halted'] = {'wave': wave + 1, 'reason': reason, 'failed': failed_now or tier_failed,
                           'untouched': later}
        message = ('rollout of %s halted after wave %d of %d: %s. %sDone: %s. Left untouched: %s. Fix the cause '
                   'and rerun the same command to resume (state: %s); %s retried first.' % (
                       the_plan['group'], wave + 1, len(waves), reason,
                       '; '.join(lines) + '. ' if lines else '',
                       ', '.join(state['done']) or 'none', ', '.join(later) or 'none', the_plan['state_file'],
                       ', '.join(failed_total)))
    elif failed_now:
        message = ('wave %d of %d: %s; %d failed host(s) within the failure budget of %d, the rollout goes on'
                   % (wave + 1, len(waves), '; '.join(lines), len(failed_total), the_plan['budget']))
    else:
        message = 'wave %d of %d passed: %s' % (wave + 1, len(waves), ', '.join(passed))
    last = not halt and wave == len(waves) - 1
    if last:
        message += '; rollout of %s complete: %d of %d host(s) done%s' % (
            the_plan['group'], len(state['done']), len(the_plan['fleet']),
            ', failed (left drained; a rerun retries them): %s' % ', '.join(failed_total) if failed_total else '')
    # Within the budget the rollout went on, but the run still ends failed, so that
    # nobody (or no AWX job status) takes a fleet with drained hosts for a finished one.
    return {'state': state, 'halt': halt, 'message': message, 'passed': passed, 'failed': failed_now,
            'finished_with_failures': bool(last and failed_total)}


def audit_gate_errors(results, severities, reads=None):
    """The node audit's FAIL results of the gated severities, one message each (empty: the gate passes).

    ``reads`` (info module results by name): a read that failed fails the gate too - an unread array is not a
    healthy one; so does a result of a gated severity that could not be evaluated (NOT_CHECKED: a drive whose
    SMART log could not be read).
    """
    problems = []
    for name in sorted(reads or {}):
        read = (reads or {})[name]
        if isinstance(read, dict) and read.get('failed'):
            problems.append('audit read %s failed: %s; the checks that need it cannot pass' % (
                name, _shorten(str(read.get('msg') or 'no message'))))
    for result in results or []:
        if (not isinstance(result, dict) or result.get('status') not in ('FAIL', 'NOT_CHECKED')
                or result.get('severity') not in severities):
            continue
        problems.append('audit %s (%s) %s: %s%s; expected %s, observed %s; fix: %s' % (
            result.get('id'), result.get('severity'), result.get('subject') or '-',
            'NOT CHECKED: ' if result.get('status') == 'NOT_CHECKED' else '', result.get('reason') or 'FAIL',
            result.get('expected'), result.get('observed'), result.get('fix')))
    return problems


def warmup_gate_errors(warmup, bound):
    """Endpoints and models whose warm-up P99 is above ``bound`` (``{'*': ms, model: ms}``; {}: no bound).

    ``warmup``: the warmup role's ``warmup_result`` (its ``traffic`` is triton_warmup's result) or the
    module's result itself. The latency judged is the P99 at the end of the warm-up - the last window's
    (``steady_p99_ms``), or the whole warm-up's (``p99_ms``) when it was shorter than a window: the
    first requests after a load are the cold start the warm-up exists to absorb.
    """
    if not bound:
        return []
    if not isinstance(warmup, dict):
        return ['no warm-up result to judge (the warmup role did not run or published nothing); a warm-up P99 '
                'bound needs one']
    traffic = warmup.get('traffic') if isinstance(warmup.get('traffic'), dict) else warmup
    problems = []
    for entry in traffic.get('results') or []:
        if not isinstance(entry, dict):
            continue
        model = str(entry.get('model'))
        limit = bound.get(model, bound.get('*'))
        if limit is None:
            continue
        steady = entry.get('steady_p99_ms')
        value, which = (steady, 'steady_p99_ms') if steady is not None else (entry.get('p99_ms'), 'p99_ms')
        if value is None:
            if entry.get('requests'):
                problems.append('warm-up of model %s on %s: no successful request (%s of %s failed), no latency '
                                'to judge' % (model, entry.get('endpoint'), entry.get('errors'),
                                              entry.get('requests')))
            continue
        if value > limit:
            problems.append('warm-up of model %s on %s: P99 %.1f ms (%s) above the bound of %g ms '
                            '(inferops_rollout_warmup_p99_ms); %d requests, %d failed. Look at the node '
                            '(page cache, CPU pinning, throttling) or raise the bound for this model'
                            % (model, entry.get('endpoint'), value, which, limit, entry.get('requests') or 0,
                               entry.get('errors') or 0))
    return problems
