# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the node audit renders from its JSON report (``audit_catalogue.build_report``), on the controller:

* ``html_page(report)`` - one self-contained HTML page (inline CSS, no script, no network): the fleet summary,
  one row per host (failures first), every FAIL and WARN with its evidence and fix, what changed since the
  previous run, one row per check, the fleet checks, each host's storage benchmark runs side by side (figure,
  before, after, ratio), then each host's results (failures first, ``<details>`` open for a host that is not
  clean).
* ``junit_xml(report)`` - JUnit XML for CI systems: a test suite per host (and one for the fleet checks), a
  test case per result (host x check x subject; classname ``<host>.<check id>``): FAIL is a ``<failure>``,
  NOT_CHECKED an ``<error>`` (the check could not run), SKIP ``<skipped>``, WARN passes with the warning in
  ``<system-out>``.
* ``textfile(entry, generated)`` - a node_exporter textfile-collector file for one host of the report: a
  gauge per check and subject with one series per status (1 for the result's status, 0 for the others, so an
  alert on ``status="FAIL"`` needs no absent() clause), counts by status, the host's worst status, whether it
  answered, and the run's time as a value (the textfile collector refuses samples with their own timestamps).
* ``health_textfile(results, finished, duration, ...)`` - the node health check's file (role node_health), the
  same check series under the contract's ``inferops_health_`` names (docs/monitoring.md).
* ``diff(previous, report)`` / ``diff_lines(d)`` - what broke and what got fixed since the previous report.

Standard library only.
"""

from __future__ import annotations

import calendar
import datetime
import html
import json
import xml.etree.ElementTree as ET

from ansible_collections.inferops.node.plugins.module_utils.audit import check as audit

__all__ = ['FLEET', 'diff', 'diff_lines', 'health_textfile', 'html_page', 'junit_xml', 'textfile', 'unix_time']

# How bad a status is, for the diff (SKIP and PASS are both "not a problem"; a check that could no longer be
# evaluated broke).
_RANK = {'FAIL': 3, 'NOT_CHECKED': 2, 'WARN': 1, 'SKIP': 0, 'PASS': 0, None: 0}
FLEET = '(fleet)'


def _value(value):
    """A result's expected/observed value as one line of text."""
    if value is None:
        return '-'
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True)


def _label(result):
    return '%s [%s]' % (result['id'], result['subject']) if result['subject'] else result['id']


def _all(report):
    """``(host, result)`` of every result of the report, the fleet checks as host ``(fleet)``."""
    out = [(FLEET, r) for r in report.get('fleet') or []]
    for entry in report.get('hosts') or []:
        out.extend((entry['host'], r) for r in entry['results'])
    return out


# ------------------------------------------------------------------ diff

def _keyed(report):
    return dict(((host, r['id'], r['subject'] or ''), r) for host, r in _all(report))


def diff(previous, report, previous_name=None):
    """``{'previous', 'previous_generated', 'broke', 'fixed', 'hosts_added', 'hosts_gone'}``.

    ``broke``: results worse than in the previous run (PASS/SKIP/absent -> WARN/FAIL, WARN -> FAIL);
    ``fixed``: better (FAIL -> WARN/PASS/SKIP, WARN -> PASS/SKIP, or no longer reported on a host that was
    audited again: ``after`` null). A host audited only in one of the runs is named, its results are not
    compared. Each entry: ``host, id, subject, before, after, reason`` (the reason of the worse side)."""
    before, after = _keyed(previous), _keyed(report)
    hosts_before = set(e['host'] for e in previous.get('hosts') or []) | {FLEET}
    hosts_after = set(e['host'] for e in report.get('hosts') or []) | {FLEET}
    broke, fixed = [], []
    for key in sorted(set(before) | set(after)):
        host = key[0]
        if host not in hosts_before or host not in hosts_after:
            continue
        old, new = before.get(key), after.get(key)
        old_status, new_status = old and old['status'], new and new['status']
        if _RANK[new_status] == _RANK[old_status]:
            continue
        entry = {'host': host, 'id': key[1], 'subject': key[2] or None, 'before': old_status, 'after': new_status}
        if _RANK[new_status] > _RANK[old_status]:
            broke.append(dict(entry, reason=new['reason']))
        else:
            fixed.append(dict(entry, reason=old['reason']))
    return {
        'previous': previous_name,
        'previous_generated': (previous.get('meta') or {}).get('generated'),
        'broke': broke,
        'fixed': fixed,
        'hosts_added': sorted(hosts_after - hosts_before),
        'hosts_gone': sorted(hosts_before - hosts_after),
    }


def _change(entry):
    subject = ' [%s]' % entry['subject'] if entry['subject'] else ''
    return '%s %s%s: %s -> %s' % (entry['host'], entry['id'], subject, entry['before'] or 'absent',
                                  entry['after'] or 'absent')


def diff_lines(d, limit=40):
    """The diff for people: one line of counts, then every broken and fixed result (at most ``limit``)."""
    lines = ['since %s: %d broke, %d fixed%s%s' % (
        d['previous'] or d['previous_generated'], len(d['broke']), len(d['fixed']),
        '; new host(s): %s' % ', '.join(d['hosts_added']) if d['hosts_added'] else '',
        '; host(s) not audited this time: %s' % ', '.join(d['hosts_gone']) if d['hosts_gone'] else '')]
    shown = [('broke', e) for e in d['broke']] + [('fixed', e) for e in d['fixed']]
    for kind, entry in shown[:limit]:
        lines.append('%s %s (%s)' % (kind, _change(entry), entry['reason']))
    if len(shown) > limit:
        lines.append('... %d more in the report' % (len(shown) - limit))
    return lines


# ------------------------------------------------------------------ JUnit XML

def junit_xml(report):
    """The report as JUnit XML text (one ``<testsuite>`` per host, the fleet checks last)."""
    generated = (report.get('meta') or {}).get('generated', '')
    suites = [(e['host'], e['results'], e.get('groups') or []) for e in report['hosts']]
    if report.get('fleet'):
        suites.append((FLEET, report['fleet'], []))
    root = ET.Element('testsuites', name='inferops.node node audit')
    totals = dict(tests=0, failures=0, errors=0, skipped=0)
    for host, results, groups in suites:
        counts = audit.summary(results)
        suite = ET.SubElement(root, 'testsuite', name=host, tests=str(len(results)), failures=str(counts['FAIL']),
                              errors=str(counts['NOT_CHECKED']), skipped=str(counts['SKIP']), time='0',
                              timestamp=generated.rstrip('Z'))
        if groups:
            ET.SubElement(ET.SubElement(suite, 'properties'), 'property', name='groups', value=','.join(groups))
        for r in results:
            case = ET.SubElement(suite, 'testcase', classname='%s.%s' % (host, r['id']),
                                 name=r['subject'] or r['id'], time='0')
            detail = 'expected: %s\nobserved: %s\nevidence: %s\nfix: %s\nseverity: %s' % (
                _value(r['expected']), _value(r['observed']), r['evidence'], r['fix'], r['severity'])
            if r['status'] == 'FAIL':
                ET.SubElement(case, 'failure', message=r['reason'] or '', type=r['severity']).text = detail
            elif r['status'] == 'NOT_CHECKED':
                ET.SubElement(case, 'error', message=r['reason'] or '', type=r['severity']).text = detail
            elif r['status'] == 'SKIP':
                ET.SubElement(case, 'skipped', message=r['reason'] or '')
            elif r['status'] == 'WARN':
                ET.SubElement(case, 'system-out').text = 'WARN: %s\n%s' % (r['reason'], detail)
        totals['tests'] += len(results)
        totals['failures'] += counts['FAIL']
        totals['errors'] += counts['NOT_CHECKED']
        totals['skipped'] += counts['SKIP']
    root.set('tests', str(totals['tests']))
    root.set('failures', str(totals['failures']))
    root.set('errors', str(totals['errors']))
    root.set('skipped', str(totals['skipped']))
    root.set('time', '0')
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding='unicode') + '\n'


# ------------------------------------------------------------------ node_exporter textfile

def _escape(value):
    """A label value in the Prometheus text format."""
    return (value or '').replace('\\', '\\\\').replace('"', '\\"').replace('\n', '\\n')


def _series(name, labels, value):
    text = ','.join('%s="%s"' % (k, _escape(v)) for k, v in sorted(labels.items()))
    return '%s{%s} %s' % (name, text, value) if text else '%s %s' % (name, value)


def _metric(lines, name, help_text, samples):
    lines.append('# HELP %s %s' % (name, help_text))
    lines.append('# TYPE %s gauge' % name)
    lines.extend(_series(name, labels, value) for labels, value in samples)


def unix_time(generated):
    """Seconds since the epoch of the report's ``meta.generated`` (``2026-12-02T03:00:00Z``)."""
    moment = datetime.datetime.strptime(generated, '%Y-%m-%dT%H:%M:%SZ')
    return calendar.timegm(moment.timetuple())


def _check_samples(results):
    """One sample per check, subject and status: 1 for the result's status, 0 for the others."""
    seen, checks = set(), []
    # Failures first: a check and subject reported twice keeps its worst status (one series per label set, or
    # node_exporter drops the whole file).
    for r in audit.failures_first(results):
        key = (r['id'], r['subject'] or '')
        if key in seen:
            continue
        seen.add(key)
        for status in audit.STATUSES:
            labels = {'check': r['id'], 'subject': r['subject'] or '', 'severity': r['severity'], 'status': status}
            checks.append((labels, 1 if status == r['status'] else 0))
    return checks


def textfile(entry, generated, check_mode=False):
    """The ``.prom`` text of one host entry of the report (``report['hosts'][i]``)."""
    lines = []
    _metric(lines, 'inferops_audit_check', 'Node audit result of a check and subject on this host: 1 for its '
            'status, 0 for the other statuses.', _check_samples(entry['results']))
    _metric(lines, 'inferops_audit_results', 'Node audit results on this host by status.',
            [({'status': s}, n) for s, n in sorted(entry['summary'].items())])
    _metric(lines, 'inferops_audit_status', 'Worst node audit status of this host: 1 for it, 0 for the others.',
            [({'status': s}, 1 if s == entry['status'] else 0) for s in ('FAIL', 'NOT_CHECKED', 'WARN', 'PASS')])
    _metric(lines, 'inferops_audit_reachable', 'Whether this host answered the node audit.',
            [({}, 1 if entry['reachable'] else 0)])
    _metric(lines, 'inferops_audit_check_mode', 'Whether the node audit ran with --check.', [({}, 1 if check_mode else 0)])
    _metric(lines, 'inferops_audit_last_run_timestamp_seconds', 'When the node audit report was generated, '
            'seconds since the epoch.', [({}, unix_time(generated))])
    return '\n'.join(lines) + '\n'


def health_textfile(results, finished, duration, page_cache_ratio=None, repository=None, warmup_success=None):
    """The ``.prom`` text of one run of the node health check (docs/monitoring.md, "The health check's metric
    contract"): its host results, the audit's verdict on them, when the run ended (seconds since the epoch) and
    how long it took, the model repository's page-cache residency (0 to 1) when it was measured, and when the
    warm-up's traffic last ended well (seconds since the epoch) when known."""
    lines = []
    _metric(lines, 'inferops_health_check', 'Node health check result of a check and subject on this node: 1 for '
            'its status, 0 for the other statuses.', _check_samples(results))
    _metric(lines, 'inferops_health_node_ready', 'Whether the node is ready: no check FAILed and no critical check '
            'is NOT_CHECKED (the node audit\'s verdict).', [({}, 0 if audit.worst(results) == 'FAIL' else 1)])
    _metric(lines, 'inferops_health_last_run_timestamp_seconds', 'End of the last completed node health check '
            'run, seconds since the epoch.', [({}, '%.3f' % finished)])
    _metric(lines, 'inferops_health_run_duration_seconds', 'Duration of that run, seconds.',
            [({}, '%.3f' % duration)])
    if page_cache_ratio is not None:
        _metric(lines, 'inferops_page_cache_resident_ratio', 'Resident bytes / file bytes of the model repository '
                '(page_cache, read only).', [({'repository': repository or ''}, '%.4f' % page_cache_ratio)])
    if warmup_success is not None:
        _metric(lines, 'inferops_warmup_last_success_timestamp_seconds', 'End of the last warm-up whose traffic '
                'job finished (the warmup role\'s status file), seconds since the epoch.',
                [({}, '%.3f' % warmup_success)])
    return '\n'.join(lines) + '\n'


# ------------------------------------------------------------------ HTML

_CSS = '''
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;margin:0;color:#1b1b1b;background:#fafafa}
header{padding:16px 24px;color:#fff}
header.FAIL{background:#b71c1c}header.NOT_CHECKED{background:#4a148c}header.WARN{background:#e65100}
header.PASS{background:#2e7d32}
header h1{margin:0 0 4px;font-size:22px}main{padding:8px 24px 32px}
h2{font-size:17px;margin:24px 0 8px;border-bottom:1px solid #ccc;padding-bottom:4px}
table{border-collapse:collapse;width:100%;background:#fff;margin-bottom:8px}
th,td{border:1px solid #ddd;padding:4px 6px;text-align:left;vertical-align:top}
th{background:#eee;font-weight:600}
code{font:12px/1.3 ui-monospace,"DejaVu Sans Mono",monospace;white-space:pre-wrap;overflow-wrap:anywhere}
td{overflow-wrap:break-word}td.v{min-width:14em}td.r{overflow-wrap:anywhere;min-width:14em}
.s{font-weight:700;text-align:center;white-space:nowrap;width:4em}
.FAIL .s,.s.FAIL{background:#ffcdd2;color:#b71c1c}.WARN .s,.s.WARN{background:#ffe0b2;color:#e65100}
.SKIP .s,.s.SKIP{background:#eceff1;color:#546e7a}.PASS .s,.s.PASS{background:#c8e6c9;color:#1b5e20}
.NOT_CHECKED .s,.s.NOT_CHECKED{background:#e1bee7;color:#4a148c}
tr.FAIL td{background:#fff5f5}tr.NOT_CHECKED td{background:#faf5fb}tr.WARN td{background:#fffaf2}
.cards{display:flex;gap:12px;flex-wrap:wrap}.card{padding:8px 16px;border-radius:6px;min-width:80px;text-align:center}
.card b{display:block;font-size:24px}
details{margin:8px 0;background:#fff;border:1px solid #ddd;border-radius:4px}
summary{padding:6px 8px;cursor:pointer;font-weight:600}
.muted{color:#666}
'''


def _e(value):
    return html.escape('%s' % value, quote=True)


def _status(status):
    return '<td class="s %s">%s</td>' % (status, status)


def _anchor(host):
    return 'host-' + ''.join(c if c.isalnum() else '-' for c in host)


def _table(head, rows):
    out = ['<table><thead><tr>%s</tr></thead><tbody>' % ''.join('<th>%s</th>' % _e(h) for h in head)]
    out.extend(rows)
    out.append('</tbody></table>')
    return '\n'.join(out)


def _result_row(r, host=None):
    cells = [_status(r['status'])]
    if host is not None:
        cells.append('<td><a href="#%s">%s</a></td>' % (_anchor(host), _e(host)) if host != FLEET else '<td>%s</td>' % _e(host))
    cells.extend([
        '<td><b>%s</b> <span class="muted">(%s)</span><br><span class="muted">%s</span></td>' % (
            _e(r['id']), _e(r['severity']), _e(r['title'])),
        '<td>%s</td>' % _e(r['subject'] or '-'),
        '<td class="r">%s</td>' % _e(r['reason'] or ''),
        '<td class="v"><span class="muted">expected</span> <code>%s</code><br><span class="muted">observed</span> <code>%s</code></td>' % (
            _e(_value(r['expected'])), _e(_value(r['observed']))),
        '<td class="v"><span class="muted">evidence</span> <code>%s</code><br><span class="muted">fix</span> %s</td>' % (
            _e(r['evidence']), _e(r['fix'])),
    ])
    return '<tr class="%s">%s</tr>' % (r['status'], ''.join(cells))


_RESULT_HEAD = ['status', 'check (severity)', 'subject', 'reason', 'values', 'evidence and fix']


def _checks(report):
    """One row per check id: counts by status over the fleet, the hosts with a FAIL, NOT_CHECKED or WARN."""
    table = {}
    for host, r in _all(report):
        row = table.setdefault(r['id'], {'title': r['title'], 'severity': r['severity'],
                                         'counts': dict((s, 0) for s in audit.STATUSES), 'hosts': {}})
        row['counts'][r['status']] += 1
        if r['status'] in ('FAIL', 'NOT_CHECKED', 'WARN'):
            row['hosts'].setdefault(host, r['status'])
    rows = []
    for check_id, row in sorted(table.items(), key=lambda item: (
            -item[1]['counts']['FAIL'], -item[1]['counts']['NOT_CHECKED'], -item[1]['counts']['WARN'], item[0])):
        worst = audit.worst([{'status': s, 'severity': row['severity']} for s, n in row['counts'].items() if n])
        rows.append('<tr class="%s">%s<td><b>%s</b><br><span class="muted">%s</span></td><td>%s</td>%s<td>%s</td></tr>' % (
            worst, _status(worst), _e(check_id), _e(row['title']), _e(row['severity']),
            ''.join('<td>%d</td>' % row['counts'][s] for s in audit.STATUSES),
            _e(', '.join('%s (%s)' % item for item in sorted(row['hosts'].items())) or '-')))
    return _table(['status', 'check', 'severity'] + list(audit.STATUSES) + ['hosts with FAIL, NOT_CHECKED or WARN'],
                  rows)


def _diff_section(d):
    if not d:
        return '<p class="muted">No previous report to compare with.</p>'
    rows = ['<tr class="%s"><td class="s %s">%s</td><td>%s</td><td>%s</td></tr>' % (
        'FAIL' if kind == 'broke' else 'PASS', 'FAIL' if kind == 'broke' else 'PASS', kind, _e(_change(e)), _e(e['reason'] or ''))
        for kind, entries in (('broke', d['broke']), ('fixed', d['fixed'])) for e in entries]
    return '<p>%s</p>\n%s' % (_e(diff_lines(d)[0]), _table(['', 'result', 'reason'], rows) if rows else '')


def _run_head(run, side):
    """A column head of the benchmark table: the side, the run's label, when, profile and kernel."""
    if run is None:
        return '<th>%s<br><span class="muted">no run with another label</span></th>' % side
    return '<th>%s: %s<br><span class="muted">%s<br>profile %s, kernel %s</span></th>' % (
        side, _e(run['label'] or '(no label)'), _e(run['started_at']), _e(run['profile'] or '-'), _e(run['kernel'] or '-'))


def _mbps(value):
    return '-' if value is None else '%.1f' % value


def _benchmarks(entry):
    """A host's storage benchmark runs (``entry['benchmarks']``, audit_benchmark.section) as one table, or the
    reason there is none."""
    bench = entry.get('benchmarks') or {'status': 'unread', 'reason': 'not in this report'}
    notes = ['%s: %s' % (_e(e['file']), _e(e['msg'])) for e in bench.get('errors') or []]
    parts = ['<h3 id="bench-%s">%s</h3>' % (_anchor(entry['host']), _e(entry['host']))]
    if not bench.get('latest'):
        # status none: the reason says "no benchmark run in <directory>"
        parts.append('<p class="muted">%s%s</p>' % (
            '' if bench['status'] == 'none' else 'benchmark runs not read: ', _e(bench.get('reason') or '')))
    else:
        if bench.get('reason'):
            parts.append('<p class="muted">%s</p>' % _e(bench['reason']))
        parts.append('<table><thead><tr><th>figure (MB/s, median)</th>%s%s<th>after / before</th></tr></thead><tbody>' % (
            _run_head(bench.get('before'), 'before'), _run_head(bench['latest'], 'after')))
        parts.extend('<tr><td><code>%s</code></td><td>%s</td><td>%s</td><td><b>%s</b></td></tr>' % (
            _e(row['figure']), _mbps(row['before']), _mbps(row['after']),
            '-' if row['ratio'] is None else '%.2f' % row['ratio']) for row in bench['figures'])
        parts.append('</tbody></table>')
    if notes:
        parts.append('<p class="muted">not read as run records: %s</p>' % '; '.join(notes))
    return '\n'.join(parts)


def html_page(report):
    """The report as one HTML document (text)."""
    meta, s = report.get('meta') or {}, report['summary']
    problems = [(host, r) for host, r in _all(report) if r['status'] in ('FAIL', 'NOT_CHECKED', 'WARN')]
    problems.sort(key=lambda item: (audit.ORDER[item[1]['status']], audit.SEVERITIES.index(item[1]['severity']),
                                    item[0] == FLEET, item[0], item[1]['id']))
    parts = [
        '<!DOCTYPE html>',
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<title>Node audit %s - %s</title>' % (_e(report['status']), _e(meta.get('generated', ''))),
        '<style>%s</style></head><body>' % _CSS,
        '<header class="%s"><h1>Node audit: %s</h1><div>%s - %d host(s), %d failed%s</div></header><main>' % (
            report['status'], report['status'], _e(meta.get('generated', '')), s['hosts'], s['hosts_failed'],
            ' - check mode' if meta.get('check_mode') else ''),
        '<h2 id="summary">Fleet summary</h2><div class="cards">%s</div>' % ''.join(
            '<div class="card s %s"><b>%d</b>%s</div>' % (status, s.get(status, 0), status) for status in audit.STATUSES),
        '<h2 id="hosts">Hosts</h2>',
        _table(['status', 'host', 'groups', 'reachable', 'why'] + list(audit.STATUSES), [
            '<tr class="%s">%s<td><a href="#%s">%s</a></td><td>%s</td><td>%s</td><td>%s</td>%s</tr>' % (
                e['status'], _status(e['status']), _anchor(e['host']), _e(e['host']), _e(', '.join(e['groups'])),
                'yes' if e['reachable'] else 'NO', _e(audit.why(e['results'])),
                ''.join('<td>%d</td>' % e['summary'].get(st, 0) for st in audit.STATUSES))
            for e in report['hosts']]),
        '<h2 id="problems">Failures, checks not made and warnings (%d)</h2>' % len(problems),
        _table(['status', 'host'] + _RESULT_HEAD[1:], [_result_row(r, host) for host, r in problems])
        if problems else '<p>None.</p>',
        '<h2 id="diff">Since the previous run</h2>',
        _diff_section(report.get('diff')),
        '<h2 id="checks">Checks</h2>',
        _checks(report),
        '<h2 id="fleet">Fleet checks</h2>',
        _table(_RESULT_HEAD, [_result_row(r) for r in report.get('fleet') or []]),
        '<h2 id="benchmarks">Storage benchmarks</h2>',
        '<p class="muted">The latest storage_benchmark run of each host and the newest earlier run with another label '
        '(before and after tuning); ratio = after / before, above 1 is faster.</p>',
    ]
    parts.extend(_benchmarks(e) for e in report['hosts'])
    parts.append('<h2 id="per-host">Per host</h2>')
    for e in report['hosts']:
        parts.append('<details id="%s"%s><summary class="%s">%s %s - %s</summary>%s</details>' % (
            _anchor(e['host']), '' if e['status'] == 'PASS' else ' open', e['status'], _e(e['status']), _e(e['host']),
            _e(', '.join('%d %s' % (e['summary'].get(st, 0), st) for st in audit.STATUSES)),
            _table(_RESULT_HEAD, [_result_row(r) for r in e['results']])))
    parts.append('<p class="muted">inferops.node node audit, report schema %s; ansible %s.</p></main></body></html>' % (
        _e(report['schema_version']), _e(meta.get('ansible_version', '?'))))
    return '\n'.join(parts) + '\n'
