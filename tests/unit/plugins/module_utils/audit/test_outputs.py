# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The node audit's outputs (module_utils/audit/outputs.py) rendered from real reports: the one
playbooks/audit.yml --check wrote on a fresh lab guest (fixtures/audit/report_fresh_guest_check.json), and one
built from the info modules run on the recorded converged guests (test_audit.recorded).

* the node_exporter textfile passes ``promtool check metrics`` (Debian's ``prometheus`` package, installed by
  tools/bootstrap.sh: a missing promtool FAILS the test);
* the JUnit XML has a test case per result, FAIL as failure, SKIP as skipped;
* the HTML page is self-contained and headless Chromium (Debian's ``chromium``, also from bootstrap.sh)
  renders it: a screenshot with the FAIL colours;
* the diff from the fresh guest's report to the converged one names what got fixed and what broke.
"""

from __future__ import annotations

import copy
import html.parser
import json
import os
import shutil
import struct
import subprocess
import xml.etree.ElementTree as ET
import zlib

import jsonschema

from ansible_collections.inferops.node.plugins.module_utils.audit import catalogue as audit_catalogue, outputs as audit_outputs
from ansible_collections.inferops.node.tests.unit.module_harness import fixture
from ansible_collections.inferops.node.tests.unit.plugins.module_utils.audit.test_catalogue import GROUPS, LAB_EXPECTED, fleet_hosts, reads, schema
# The recorded reads, a module-scoped pytest fixture, used here by name.
from ansible_collections.inferops.node.tests.unit.plugins.module_utils.audit.test_catalogue import recorded  # noqa: F401 pylint: disable=unused-import


def lab_report():
    """The report playbooks/audit.yml --check wrote for a fresh lab guest (fixtures/audit/README.md)."""
    return json.loads(fixture('audit', 'report_fresh_guest_check.json'))


def converged_report(recorded, generated='2026-12-02T04:00:00Z'):
    """Three hosts from the converged recordings; node2's index array degraded (md_info recorded 'degraded')."""
    hosts = fleet_hosts(recorded)
    hosts['node2']['results'] = audit_catalogue.evaluate_host(reads(recorded, md_info=recorded['md_degraded']), LAB_EXPECTED)
    return audit_catalogue.build_report(hosts, GROUPS, meta={'generated': generated, 'check_mode': False})


# ------------------------------------------------------------------ node_exporter textfile

def promtool(text):
    tool = shutil.which('promtool')
    assert tool, 'promtool missing: tools/bootstrap.sh installs Debian\'s prometheus package'
    proc = subprocess.run([tool, 'check', 'metrics'], input=text, capture_output=True, text=True, timeout=60, check=False)
    return proc.returncode, proc.stdout + proc.stderr


def samples(text):
    """``{(name, frozenset(labels)): value}`` of a textfile (the label values have no commas or quotes here)."""
    out = {}
    for line in text.splitlines():
        if line.startswith('#'):
            continue
        series, value = line.rsplit(' ', 1)
        name, dummy, labels = series.partition('{')
        pairs = frozenset(tuple(p.split('=', 1)) for p in labels.rstrip('}').split(',') if p)
        assert (name, pairs) not in out, 'duplicate series %s' % line
        out[(name, pairs)] = float(value)
    return out


def test_textfile_of_the_lab_report_passes_promtool():
    report = lab_report()
    entry = report['hosts'][0]
    text = audit_outputs.textfile(entry, report['meta']['generated'], report['meta']['check_mode'])
    assert promtool(text) == (0, '')
    found = samples(text)
    fail = ('inferops_audit_check', frozenset([('check', '"kernel.sysctl"'), ('subject', '"vm.swappiness"'),
                                               ('severity', '"major"'), ('status', '"FAIL"')]))
    assert found[fail] == 1
    assert found[('inferops_audit_check', fail[1] - {('status', '"FAIL"')} | {('status', '"PASS"')})] == 0
    # One status per check and subject: each set of four series sums to 1.
    totals = {}
    for (name, labels), value in found.items():
        if name == 'inferops_audit_check':
            key = frozenset(label for label in labels if label[0] != 'status')
            totals[key] = totals.get(key, 0) + value
    assert set(totals.values()) == {1}
    assert found[('inferops_audit_results', frozenset([('status', '"FAIL"')]))] == 18
    assert found[('inferops_audit_status', frozenset([('status', '"FAIL"')]))] == 1
    assert found[('inferops_audit_check_mode', frozenset())] == 1 and found[('inferops_audit_reachable', frozenset())] == 1
    # 2026-12-02T03:08:58Z
    assert found[('inferops_audit_last_run_timestamp_seconds', frozenset())] == 1796180938


def test_textfile_one_series_per_subject_and_escaped(recorded):
    report = converged_report(recorded)
    entry = copy.deepcopy(report['hosts'][0])
    # A check that reports one subject twice keeps the worse result; a subject with a quote and a backslash.
    entry['results'].append(dict(entry['results'][0], status='PASS'))
    entry['results'].append(dict(entry['results'][0], subject='a "b" \\c'))
    text = audit_outputs.textfile(entry, report['meta']['generated'])
    assert promtool(text) == (0, '')
    assert 'subject="a \\"b\\" \\\\c"' in text
    first = entry['results'][0]
    assert '{check="%s",severity="%s",status="%s",subject="%s"} 1' % (
        first['id'], first['severity'], first['status'], first['subject']) in text


def test_textfile_of_an_unreachable_host(recorded, tmp_path):
    report = converged_report(recorded)
    entry = {'host': 'node9', 'groups': [], 'reachable': False, 'status': 'FAIL',
             'summary': {'FAIL': 1, 'WARN': 0, 'SKIP': 0, 'PASS': 0},
             'results': [audit_catalogue.audit.Check('audit.reachable', 'Host answered the audit', 'critical', 'e', 'f').fail(
                 None, 'answered', None, 'no audit result')]}
    text = audit_outputs.textfile(entry, report['meta']['generated'])
    assert promtool(text) == (0, '')
    assert 'inferops_audit_reachable 0\n' in text
    assert 'inferops_audit_check{check="audit.reachable",severity="critical",status="FAIL",subject=""} 1' in text


def test_promtool_finds_a_bad_textfile():
    """The check is real: promtool refuses what node_exporter would refuse."""
    code, out = promtool('inferops_audit_check{check="x"} 1 1796180938000\n')
    assert code != 0 and 'no help text' in out


# ------------------------------------------------------------------ JUnit XML

def test_junit_of_the_lab_report():
    report = lab_report()
    root = ET.fromstring(audit_outputs.junit_xml(report))
    entry = report['hosts'][0]
    total = len(entry['results']) + len(report['fleet'])
    assert root.tag == 'testsuites' and root.get('tests') == str(total)
    assert (root.get('failures'), root.get('skipped'), root.get('errors')) == ('18', '20', '0')
    suites = root.findall('testsuite')
    assert [s.get('name') for s in suites] == ['node1', '(fleet)']
    cases = suites[0].findall('testcase')
    assert len(cases) == len(entry['results'])
    failed = [c for c in cases if c.find('failure') is not None]
    assert len(failed) == 18 and len([c for c in cases if c.find('skipped') is not None]) == 20
    swappiness = [c for c in failed if c.get('name') == 'vm.swappiness'][0]
    assert swappiness.get('classname') == 'node1.kernel.sysctl'
    failure = swappiness.find('failure')
    assert failure.get('type') == 'major' and failure.get('message').startswith('vm.swappiness = 1 wanted')
    assert 'fix: role kernel_tuning (tag kernel_tuning)' in failure.text
    link = [c for c in cases if c.get('classname') == 'node1.nvme.link'][0]
    assert 'emulated drive has no PCIe capability' in link.find('skipped').get('message')


def test_junit_warn_passes_with_its_text(recorded):
    report = converged_report(recorded)
    root = ET.fromstring(audit_outputs.junit_xml(report))
    fleet = [s for s in root.findall('testsuite') if s.get('name') == '(fleet)'][0]
    # node2 differs from its group (degraded index): fleet.group WARN, shown, not failed.
    warn = [c for c in fleet.findall('testcase') if c.get('name') == 'node2 in local_nvme'][0]
    assert warn.find('failure') is None and warn.find('system-out').text.startswith('WARN: storage.md_health')


def test_a_check_not_made_is_an_error_a_series_a_why_and_a_break(recorded):
    """node2's md_info read failed: its md checks are NOT_CHECKED in every output, and the diff calls it broken."""
    before = converged_report(recorded)
    hosts = fleet_hosts(recorded)
    hosts['node2']['results'] = audit_catalogue.evaluate_host(
        reads(recorded, md_info={'failed': True, 'msg': 'mdadm: command not found'}), LAB_EXPECTED)
    report = audit_catalogue.build_report(hosts, GROUPS, meta={'generated': '2026-12-02T05:00:00Z', 'check_mode': False})
    node2 = [e for e in report['hosts'] if e['host'] == 'node2'][0]
    assert node2['status'] == 'FAIL' and node2['summary']['NOT_CHECKED'] > 0
    root = ET.fromstring(audit_outputs.junit_xml(report))
    suite = [x for x in root.findall('testsuite') if x.get('name') == 'node2'][0]
    errors = [c for c in suite.findall('testcase') if c.find('error') is not None]
    assert suite.get('errors') == str(len(errors)) == str(node2['summary']['NOT_CHECKED'])
    assert errors[0].find('error').get('message') == 'md_info failed: mdadm: command not found'
    text = audit_outputs.textfile(node2, report['meta']['generated'])
    assert promtool(text)[0] == 0, promtool(text)[1]
    found = samples(text)
    assert found[('inferops_audit_status', frozenset([('status', '"FAIL"')]))] == 1
    assert found[('inferops_audit_results', frozenset([('status', '"NOT_CHECKED"')]))] == node2['summary']['NOT_CHECKED']
    page = audit_outputs.html_page(report)
    assert 'storage.md_present NOT_CHECKED (critical): md_info failed: mdadm: command not found' in page
    broke = [(e['host'], e['id'], e['after']) for e in audit_outputs.diff(before, report)['broke']]
    assert ('node2', 'storage.md_present', 'NOT_CHECKED') in broke


# ------------------------------------------------------------------ diff

def test_diff_from_the_fresh_guest_to_the_converged_node(recorded):
    before = lab_report()
    after = converged_report(recorded)
    d = audit_outputs.diff(before, after, 'audit-20261202T030858Z.json')
    assert d['hosts_added'] == ['node2', 'node3'] and d['hosts_gone'] == []
    fixed = dict(((e['id'], e['subject']), (e['before'], e['after'])) for e in d['fixed'] if e['host'] == 'node1')
    # Converged: the arrays run, the profile is applied (but for the local override), the read-ahead is set.
    assert fixed[('storage.md_present', '/dev/md/models')] == ('FAIL', 'PASS')
    assert fixed[('kernel.sysctl', 'vm.dirty_ratio')] == ('FAIL', 'PASS')
    assert ('kernel.sysctl', 'vm.swappiness') not in fixed
    assert fixed[('storage.nvme_queue', 'LABMODEL0 (nvme0n1 QEMU NVMe Ctrl)')] == ('FAIL', 'PASS')
    broke = [(e['host'], e['id'], e['subject'], e['before'], e['after']) for e in d['broke']]
    # The fresh guest had no arrays, so nothing to mount; converged, /data/index is built but not mounted.
    assert ('node1', 'storage.mount', '/data/index', 'SKIP', 'FAIL') in broke
    lines = audit_outputs.diff_lines(d)
    assert lines[0] == 'since audit-20261202T030858Z.json: %d broke, %d fixed; new host(s): node2, node3' % (
        len(d['broke']), len(d['fixed']))
    assert 'broke node1 storage.mount [/data/index]: SKIP -> FAIL (/dev/md/index is not mounted at /data/index)' in lines
    after['diff'] = d
    jsonschema.validate(after, schema())


def test_diff_same_report_is_empty(recorded):
    report = converged_report(recorded)
    d = audit_outputs.diff(report, copy.deepcopy(report))
    assert (d['broke'], d['fixed'], d['hosts_added'], d['hosts_gone']) == ([], [], [], [])


# ------------------------------------------------------------------ HTML

class Page(html.parser.HTMLParser):
    """The tags and attributes of a page, and the text of its table rows."""

    def __init__(self):
        super().__init__()
        self.tags, self.rows, self.row = [], [], None

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == 'tr':
            self.row = [dict(attrs).get('class'), '']

    def handle_endtag(self, tag):
        if tag == 'tr' and self.row:
            self.rows.append(tuple(self.row))
            self.row = None

    def handle_data(self, data):
        if self.row:
            self.row[1] += data + ' '


def parse(text):
    page = Page()
    page.feed(text)
    return page


def test_html_self_contained_failures_first(recorded):
    report = converged_report(recorded)
    page = parse(audit_outputs.html_page(report))
    # No script, no stylesheet or image to fetch, no link off the page.
    assert [t for t, a in page.tags if t in ('script', 'link', 'img', 'iframe', 'object')] == []
    assert [a for t, a in page.tags if a.get('src') or (a.get('href') and not a['href'].startswith('#'))] == []
    text = audit_outputs.html_page(report)
    hosts = parse(text[text.index('id="hosts"'):text.index('id="problems"')]).rows[1:]
    # One row per host, failures first, then by name: all three FAIL (the local sysctl override of the
    # recordings; node2 also its degraded index), so node1, node2, node3.
    assert [(r[0], r[1].split()[1]) for r in hosts] == [('FAIL', 'node1'), ('FAIL', 'node2'), ('FAIL', 'node3')]
    statuses = [r[0] for r in page.rows if r[0] in ('FAIL', 'WARN', 'SKIP', 'PASS')]
    assert statuses[0] == 'FAIL'
    assert text.index('id="hosts"') < text.index('id="problems"') < text.index('id="diff"') < text.index('id="per-host"')
    # The fix of a FAIL is on the page, escaped.
    assert 'mdadm --manage &lt;array&gt; --add &lt;drive&gt; (md_raid_xfs reports a degraded array, it never adds members)' in text
    # Every anchor a row links to exists.
    ids = set(a['id'] for t, a in page.tags if a.get('id'))
    assert set(a['href'][1:] for t, a in page.tags if a.get('href')) <= ids


def png_pixels(path):
    """``(width, height, rows of RGB(A) bytes)`` of a PNG (8-bit RGB or RGBA, not interlaced) - standard library."""
    with open(path, 'rb') as handle:
        data = handle.read()
    assert data[:8] == b'\x89PNG\r\n\x1a\n', 'not a PNG'
    pos, idat, header = 8, [], None
    while pos < len(data):
        length, kind = struct.unpack('>I4s', data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b'IHDR':
            header = struct.unpack('>IIBBBBB', body)
        elif kind == b'IDAT':
            idat.append(body)
        pos += 12 + length
    width, height, depth, colour, dummy, dummy2, interlace = header
    assert depth == 8 and colour in (2, 6) and not interlace, header
    bpp = 3 if colour == 2 else 4
    raw, stride = zlib.decompress(b''.join(idat)), width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride) if kind else ():
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], (prev[i - bpp] if i >= bpp else 0)
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            else:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, [[tuple(row[x:x + 3]) for x in range(0, stride, bpp)] for row in rows]


def test_html_renders_in_headless_chromium(tmp_path):
    """Chromium (Debian's package; tools/bootstrap.sh installs it - missing, the test FAILS) renders the lab
    guest's report: a screenshot 1024x768 of its top, the FAIL header and the red FAIL card."""
    browser = shutil.which('chromium')
    assert browser, 'chromium missing: tools/bootstrap.sh installs Debian\'s chromium package'
    page = tmp_path / 'audit.html'
    page.write_text(audit_outputs.html_page(lab_report()))
    shot = tmp_path / 'audit.png'
    proc = subprocess.run([browser, '--headless', '--no-sandbox', '--disable-gpu', '--hide-scrollbars',
                           '--no-first-run', '--user-data-dir=%s' % (tmp_path / 'profile'),
                           '--window-size=1024,768', '--screenshot=%s' % shot, page.as_uri()],
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0 and shot.exists(), proc.stderr[-2000:]
    width, height, pixels = png_pixels(str(shot))
    assert (width, height) == (1024, 768)
    colours = {}
    for row in pixels:
        for pixel in row:
            colours[pixel] = colours.get(pixel, 0) + 1
    # The header of a failed run (#b71c1c) across the top, the FAIL card (#ffcdd2), text, not one blank colour.
    assert colours.get((0xb7, 0x1c, 0x1c), 0) > width * 40
    assert colours.get((0xff, 0xcd, 0xd2), 0) > 1000
    assert len(colours) > 50
    assert pixels[10][10] == (0xb7, 0x1c, 0x1c)


# ------------------------------------------------------------------ the node health check's textfile

def alert_rule_series(prefixes):
    """The metric names of ``prefixes`` that monitoring/prometheus/inferops-alerts.yml selects."""
    import re
    with open(os.path.join(os.path.dirname(__file__), '..', '..', '..', '..', '..', 'monitoring', 'prometheus',
                           'inferops-alerts.yml')) as handle:
        text = handle.read()
    return set(name for name in re.findall(r'\b(inferops_[a-z_]*[a-z])\b', text) if name.startswith(prefixes))


def test_health_textfile_is_the_contract_the_alert_rules_read(recorded):
    """docs/monitoring.md's contract, from the results of the recorded converged guest and of the same guest with
    its index array degraded: every series the rules select is written (the warm-up's from the warmup role's
    status file, when the checker found one that ended well)."""
    healthy = audit_catalogue.evaluate_host(reads(recorded), LAB_EXPECTED)
    degraded = audit_catalogue.evaluate_host(reads(recorded, md_info=recorded['md_degraded']), LAB_EXPECTED)
    assert audit_catalogue.audit.worst(degraded) == 'FAIL'
    texts = {}
    for name, results in (('healthy', healthy), ('degraded', degraded)):
        texts[name] = audit_outputs.health_textfile(results, 1796180938.25, 4.5, 0.93, '/data/models', 1796170000.5)
        assert promtool(texts[name]) == (0, '')
    found = samples(texts['degraded'])
    names = set(name for name, labels in found)
    assert alert_rule_series(('inferops_health_', 'inferops_page_cache_', 'inferops_warmup_')) <= names
    assert names == {'inferops_health_check', 'inferops_health_node_ready', 'inferops_health_last_run_timestamp_seconds',
                     'inferops_health_run_duration_seconds', 'inferops_page_cache_resident_ratio',
                     'inferops_warmup_last_success_timestamp_seconds'}
    assert found[('inferops_warmup_last_success_timestamp_seconds', frozenset())] == 1796170000.5
    assert found[('inferops_health_node_ready', frozenset())] == 0
    assert samples(texts['healthy'])[('inferops_health_node_ready', frozenset())] == (
        0 if audit_catalogue.audit.worst(healthy) == 'FAIL' else 1)
    assert found[('inferops_health_last_run_timestamp_seconds', frozenset())] == 1796180938.25
    assert found[('inferops_health_run_duration_seconds', frozenset())] == 4.5
    assert found[('inferops_page_cache_resident_ratio', frozenset([('repository', '"/data/models"')]))] == 0.93
    # The same series per check and subject as the audit's file (one per status), under the health check's name.
    failed = [r for r in degraded if r['status'] == 'FAIL'][0]
    assert ('inferops_health_check{check="%s",severity="%s",status="FAIL",subject="%s"} 1'
            % (failed['id'], failed['severity'], failed['subject'] or '')) in texts['degraded']
    assert len([k for k in found if k[0] == 'inferops_health_check']) == 5 * len(
        set((r['id'], r['subject'] or '') for r in degraded))
    # No residency measured: no series (an alert on it would read a guess).
    assert 'inferops_page_cache_resident_ratio' not in audit_outputs.health_textfile(healthy, 1.0, 1.0)
    # No warm-up that ended well: no series (InferopsModelPageCacheLow waits for one).
    assert 'inferops_warmup_' not in audit_outputs.health_textfile(healthy, 1.0, 1.0)
