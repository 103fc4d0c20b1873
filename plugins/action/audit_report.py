# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""audit_report: once per run, on the controller - the fleet checks over every host's ``audit_host`` result,
the diff against the previous report, the JSON report (schema ``schemas/audit_report.schema.json`` of this
collection, checked before writing when python-jsonschema is installed), the HTML page, JUnit XML and one
node_exporter textfile per host rendered from it (``module_utils/audit/outputs.py``), the human summary;
fails after writing when a check FAILed."""

from __future__ import annotations

import datetime
import glob
import json
import os

from ansible import __version__ as ansible_version
from ansible.errors import AnsibleError
from ansible.plugins.action import ActionBase
from ansible.utils.display import Display

from ansible_collections.inferops.node.plugins.module_utils.audit import check as audit, catalogue as audit_catalogue, outputs as audit_outputs
from ansible_collections.inferops.node.plugins.module_utils.common import textfile

display = Display()
SCHEMA = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'schemas', 'audit_report.schema.json')


def validate(report):
    """Schema errors of ``report`` (empty when valid, or when jsonschema is not installed: ``None``)."""
    try:
        import jsonschema
    except ImportError:
        return None
    with open(SCHEMA) as handle:
        schema = json.load(handle)
    validator = jsonschema.Draft202012Validator(schema)
    return ['%s: %s' % ('/'.join(str(p) for p in e.absolute_path), e.message) for e in validator.iter_errors(report)]


def previous_report(dest_dir):
    """The newest ``audit-*.json`` of ``dest_dir`` (names sort by time), or None."""
    found = sorted(glob.glob(os.path.join(dest_dir, 'audit-*.json')))
    return found[-1] if found else None


def load_previous(path):
    """``(report, None)``, or ``(None, why not)`` - a report of another schema version is not compared."""
    try:
        with open(path) as handle:
            report = json.load(handle)
    except (OSError, ValueError) as exc:
        return None, 'previous report %s unreadable: %s' % (path, exc)
    if not isinstance(report, dict) or report.get('schema_version') != audit.SCHEMA_VERSION:
        return None, 'previous report %s is not schema version %s' % (path, audit.SCHEMA_VERSION)
    return report, None


def _file_name(host):
    return ''.join(c if c.isalnum() or c in '.-_' else '_' for c in host)


def write_atomically(path, text):
    os.makedirs(os.path.dirname(path) or '.', exist_ok=True)
    textfile.replace_text(path, text, prefix='.audit-')


class ActionModule(ActionBase):

    TRANSFERS_FILES = False
    _requires_connection = False
    _VALID_ARGS = frozenset(('hosts', 'result_var', 'dest_dir', 'fail_on_fail', 'allowed', 'html_path', 'junit_path',
                             'prom_dir', 'previous', 'compare'))

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        dummy, args = self.validate_argument_spec(argument_spec=dict(
            hosts=dict(type='list', elements='str', required=True),
            result_var=dict(type='str', default='__audit_host'),
            dest_dir=dict(type='path', required=True),
            fail_on_fail=dict(type='bool', default=True),
            allowed=dict(type='dict'),
            html_path=dict(type='path'),
            junit_path=dict(type='path'),
            prom_dir=dict(type='path'),
            previous=dict(type='path'),
            compare=dict(type='bool', default=True),
        ))
        # Absolute: the textfiles' paths go to ansible.builtin.copy's src, which would search a relative one
        # in the playbook's files/.
        for key in ('dest_dir', 'html_path', 'junit_path', 'prom_dir', 'previous'):
            if args[key]:
                args[key] = os.path.abspath(args[key])
        task_vars = task_vars or {}
        hostvars = task_vars.get('hostvars') or {}
        hosts = {}
        for host in args['hosts']:
            data = hostvars[host].get(args['result_var']) if host in hostvars else None
            names = list(hostvars[host].get('group_names') or []) if host in hostvars else []
            if not data or data.get('failed') or 'results' not in data:
                why = (data or {}).get('msg') or 'no audit result: the host was unreachable or failed before the audit'
                hosts[host] = {'results': [audit_catalogue.REACHABLE.fail(None, 'answered', None, why)], 'drives': None,
                               'groups': names, 'reachable': False, 'benchmarks': None}
                continue
            hosts[host] = {'results': list(data['results']), 'drives': data.get('drives'), 'groups': names,
                           'reachable': True, 'benchmarks': data.get('benchmarks')}
        groups = dict((group, [h for h in members if h in hosts]) for group, members in (task_vars.get('groups') or {}).items()
                      if group not in ('all', 'ungrouped'))
        now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
        meta = {'generated': now.isoformat().replace('+00:00', 'Z'), 'check_mode': bool(self._task.check_mode),
                'ansible_version': ansible_version, 'play_hosts': list(args['hosts'])}
        fleet_settings = dict((k, task_vars[k]) for k in ('audit_fleet_temp_delta_c',) if k in task_vars)
        report = audit_catalogue.build_report(hosts, groups, fleet_settings, meta)
        path = os.path.join(args['dest_dir'], 'audit-%s.json' % now.strftime('%Y%m%dT%H%M%SZ'))
        diff_lines = self.with_previous(report, args, path)
        errors = validate(report)
        if errors:
            raise AnsibleError('audit_report: the report does not match %s: %s' % (SCHEMA, '; '.join(errors[:5])))
        files = self.render(report, args, path)
        for name, text in files['texts']:
            write_atomically(name, text)
        lines = audit_catalogue.summary_lines(report)
        for line in lines + diff_lines:
            display.display(line)
        display.display('node audit report: %s' % path)
        for kind in ('html', 'junit'):
            if files[kind]:
                display.display('node audit %s: %s' % (kind, files[kind]))
        if files['prom']:
            display.display('node audit textfiles: %d in %s' % (len(files['prom']), args['prom_dir']))
        unexpected = []
        if args['allowed'] is not None:
            for entry in report['hosts']:
                unexpected.extend('%s: %s' % (entry['host'], text)
                                  for text in audit.unexpected(entry['results'], args['allowed']))
            unexpected.extend('fleet: %s' % text for text in audit.unexpected(report['fleet'], args['allowed']))
        result.update(changed=False, report_path=path, unexpected=unexpected, status=report['status'], summary=report['summary'],
                      summary_lines=lines, schema_checked=errors is not None, audit_diff=report.get('diff'), diff_lines=diff_lines,
                      files=dict((kind, files[kind]) for kind in ('json', 'html', 'junit', 'prom')))
        if report['status'] == 'FAIL' and args['fail_on_fail']:
            result['failed'] = True
            result['msg'] = '%s (report %s)' % (lines[0], path)
        return result

    @staticmethod
    def with_previous(report, args, path):
        """Add the diff against the previous report (O(previous), else the newest in O(dest_dir)) to ``report``;
        return its lines for people (a line saying why there is none)."""
        if not args['compare']:
            return []
        previous = args['previous'] or previous_report(args['dest_dir'])
        if not previous or os.path.abspath(previous) == os.path.abspath(path):
            return ['no previous report in %s: no diff' % args['dest_dir']]
        old, why = load_previous(previous)
        if old is None:
            return [why + ': no diff']
        report['diff'] = audit_outputs.diff(old, report, os.path.basename(previous))
        return audit_outputs.diff_lines(report['diff'])

    @staticmethod
    def render(report, args, path):
        """``{'json', 'html', 'junit': path or None, 'prom': {host: path}, 'texts': [(path, text)]}``."""
        texts = [(path, json.dumps(report, indent=1, sort_keys=True) + '\n')]
        out = {'json': path, 'html': args['html_path'], 'junit': args['junit_path'], 'prom': {}}
        if args['html_path']:
            texts.append((args['html_path'], audit_outputs.html_page(report)))
        if args['junit_path']:
            texts.append((args['junit_path'], audit_outputs.junit_xml(report)))
        if args['prom_dir']:
            for entry in report['hosts']:
                name = os.path.join(args['prom_dir'], '%s.prom' % _file_name(entry['host']))
                out['prom'][entry['host']] = name
                texts.append((name, audit_outputs.textfile(entry, report['meta']['generated'], report['meta']['check_mode'])))
        out['texts'] = texts
        return out
