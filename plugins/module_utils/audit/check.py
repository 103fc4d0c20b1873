# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The node audit's result type: what every check of the catalogue returns.

A check is a function ``check(reads, expected)`` of one concern file (``audit/platform.py``,
``audit/nvme.py``, ``audit/storage.py``, ``audit/fabric.py``, ``audit/kernel.py``, ``audit/irq.py``, ``audit/benchmark.py``,
``audit/serving.py``)
returning a list of results. It only evaluates what the ``*_info`` modules returned (``reads``, by module
name) against the values the roles are given (``expected``, by variable name) - it never reads the host
itself, so the audit and the roles see the same host through the same code.

* ``Check(id, title, severity, evidence, fix)`` - a catalogue entry; ``check.result(...)``,
  ``check.passed/warn/fail/skip(...)`` build one result for one subject (a drive, an array, a key).
* ``read(reads, name)`` - the result of an info module, or raise ``Missing`` (the check is SKIP with the
  reason: not run, or gave no such value) or ``Unreadable`` (the read failed: the check is NOT_CHECKED - it
  could not be evaluated, which is not the same as nothing to check).
* ``require_group(expected, group, role)`` - raise ``Missing`` unless the host is in the inventory group whose
  site playbook runs ``role`` on it (``expected['group_names']``, which ``audit_host`` passes).
* ``run(checks, reads, expected)`` - every check, a SKIP for one that raised ``Missing``, a NOT_CHECKED for one
  that raised ``Unreadable``.
* ``summary(results)`` - counts by status; ``worst(results)`` - a host's verdict: FAIL when a check failed or a
  critical check could not be evaluated (the host is not ready), then NOT_CHECKED, WARN, PASS;
  ``failures_first(results)`` - the order reports list results in (``ORDER``: FAIL, NOT_CHECKED, WARN, SKIP,
  PASS; critical before major before minor within a status); ``why(results)`` - the results behind a verdict
  that is not PASS, in one line.
* ``unexpected(results, allowed)`` - the results whose status ``allowed`` (check id -> statuses; PASS and SKIP
  for an id not listed) does not allow, worded for people (a test's assertion).

Standard library only: the same code runs in the action plugin on the controller and in the tests.
"""

from __future__ import annotations

__all__ = ['Check', 'Missing', 'ORDER', 'SCHEMA_VERSION', 'SEVERITIES', 'STATUSES', 'Unreadable', 'failures_first',
           'read', 'require_group', 'run', 'summary', 'unexpected', 'why', 'worst']

# The version of the report document (schemas/audit_report.schema.json of this collection, "$id").
SCHEMA_VERSION = 1
# NOT_CHECKED: the check could not be evaluated (its read failed). It is never counted as a PASS: a report that
# shows it green would hide a host nobody looked at.
STATUSES = ('FAIL', 'NOT_CHECKED', 'WARN', 'SKIP', 'PASS')
SEVERITIES = ('critical', 'major', 'minor')
# Position of each status in a report: failures first.
ORDER = dict((status, index) for index, status in enumerate(STATUSES))
_SEVERITY_ORDER = dict((severity, index) for index, severity in enumerate(SEVERITIES))


class Missing(Exception):
    """A read the check needs is absent: the check is SKIP with this reason."""


class Unreadable(Missing):
    """A read the check needs failed: the check is NOT_CHECKED with this reason."""


def read(reads, name, key=None):
    """``reads[name]`` (an info module's registered result), or its ``key``; raise ``Missing`` naming why not."""
    result = (reads or {}).get(name)
    if result is None or result.get('skipped'):
        raise Missing('%s was not run on this host' % name)
    if result.get('failed'):
        raise Unreadable('%s failed: %s' % (name, result.get('msg', 'no message')))
    if key is None:
        return result
    if result.get(key) is None:
        raise Missing('%s returned no %s' % (name, key))
    return result[key]


def require_group(expected, group, role):
    """Raise ``Missing`` unless ``expected['group_names']`` has ``group``: a role's variables have their role
    defaults on every host, so without this a check of a site role (``playbooks/vars/site_roles.yml``) would
    judge hosts that role never runs on - an NVMe-oF initiator's namespaces against nvme_sched's read-ahead."""
    groups = expected.get('group_names')
    if groups is None:
        raise Missing("the host's groups (group_names) are unknown: the %s role runs on the %s group only" % (role, group))
    if group not in groups:
        raise Missing('not in the %s group: the %s role does not run on this host' % (group, role))


class Check(object):
    """One entry of the catalogue: id, title, severity, the evidence it reads and the role or tag that fixes it."""

    def __init__(self, check_id, title, severity, evidence, fix, func=None, variables=()):
        if severity not in SEVERITIES:
            raise ValueError('%s: severity %r is not one of %s' % (check_id, severity, ', '.join(SEVERITIES)))
        self.id = check_id
        self.title = title
        self.severity = severity
        self.evidence = evidence
        self.fix = fix
        self.func = func
        # The role variables the check compares with, by name (``__name``: the role's own computed form, in its
        # vars/main.yml). They are all it sees of ``expected``, with the audit's thresholds (``audit_*``) and
        # ``group_names``: what a check reads is declared once, here, and audit_host resolves exactly that.
        self.variables = tuple(variables)

    def __call__(self, func):
        """Decorator: ``@Check(...)`` over ``def check(check, reads, expected)``."""
        self.func = func
        return self

    def result(self, status, subject, expected, observed, reason=None, evidence=None):
        if status not in STATUSES:
            raise ValueError('%s: status %r is not one of %s' % (self.id, status, ', '.join(STATUSES)))
        return {
            'id': self.id,
            'title': self.title,
            'severity': self.severity,
            'subject': subject,
            'status': status,
            'expected': expected,
            'observed': observed,
            'evidence': evidence or self.evidence,
            'fix': self.fix,
            'reason': reason,
        }

    def passed(self, subject, expected, observed, reason=None, evidence=None):
        return self.result('PASS', subject, expected, observed, reason, evidence)

    def warn(self, subject, expected, observed, reason, evidence=None):
        return self.result('WARN', subject, expected, observed, reason, evidence)

    def fail(self, subject, expected, observed, reason, evidence=None):
        return self.result('FAIL', subject, expected, observed, reason, evidence)

    def skip(self, reason, subject=None, expected=None):
        return self.result('SKIP', subject, expected, None, reason)

    def not_checked(self, reason, subject=None, expected=None):
        return self.result('NOT_CHECKED', subject, expected, None, reason)

    def compare(self, subject, expected, observed, problem, evidence=None):
        """PASS when ``observed == expected``, else FAIL worded ``problem``."""
        if observed == expected:
            return self.passed(subject, expected, observed, evidence=evidence)
        return self.fail(subject, expected, observed, problem, evidence)

    def sees(self, name):
        return name in self.variables or name.startswith('audit_') or name == 'group_names'

    def evaluate(self, reads, expected):
        seen = dict((name, value) for name, value in expected.items() if self.sees(name))
        try:
            results = self.func(self, reads, seen)
        except Unreadable as exc:
            return [self.not_checked(str(exc))]
        except Missing as exc:
            return [self.skip(str(exc))]
        return results or [self.skip('nothing to check on this host')]


def run(checks, reads, expected):
    """The results of every check, in catalogue order."""
    out = []
    for check in checks:
        out.extend(check.evaluate(reads, expected or {}))
    return out


def summary(results):
    counts = dict((status, 0) for status in STATUSES)
    for result in results:
        counts[result['status']] += 1
    return counts


def _severity(result):
    return _SEVERITY_ORDER.get(result.get('severity'), len(SEVERITIES))


def failures_first(results):
    """``results`` sorted FAIL, NOT_CHECKED, WARN, SKIP, PASS, critical first within a status, then catalogue
    order (a stable sort)."""
    return sorted(results, key=lambda r: (ORDER[r['status']], _severity(r)))


def _fails_host(result):
    return result['status'] == 'FAIL' or (result['status'] == 'NOT_CHECKED' and result.get('severity') == 'critical')


def worst(results):
    """A host's verdict on ``results``: FAIL when a check failed or a critical one could not be evaluated (the
    host is not ready), else NOT_CHECKED, WARN, then PASS (SKIP counts as PASS: nothing to check), PASS when
    empty."""
    if any(_fails_host(result) for result in results):
        return 'FAIL'
    statuses = set(result['status'] for result in results)
    for status in ('NOT_CHECKED', 'WARN'):
        if status in statuses:
            return status
    return 'PASS'


def why(results, limit=3):
    """The results behind a verdict that is not PASS, worst and most severe first, in one line
    (``<id> [<subject>] <STATUS> (<severity>): <reason>; ...``); '' for a clean host."""
    shown = [r for r in failures_first(results) if r['status'] in ('FAIL', 'NOT_CHECKED', 'WARN')]
    parts = ['%s%s %s (%s): %s' % (r['id'], ' [%s]' % r['subject'] if r.get('subject') else '', r['status'],
                                   r.get('severity'), r.get('reason')) for r in shown[:limit]]
    if len(shown) > limit:
        parts.append('and %d more' % (len(shown) - limit))
    return '; '.join(parts)


def unexpected(results, allowed=None, default=('PASS', 'SKIP')):
    """``['<id> [<subject>] <status>: <reason>']`` of the results whose status is not allowed for their id."""
    allowed = allowed or {}
    return ['%s [%s] %s: %s' % (r['id'], r['subject'] or '-', r['status'], r['reason'])
            for r in results if r['status'] not in allowed.get(r['id'], default)]
