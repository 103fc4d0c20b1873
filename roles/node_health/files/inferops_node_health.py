# Managed by inferops.node (role node_health); local changes are overwritten.
"""The node health check: the node audit's host checks, run on the node itself, into a node_exporter textfile.

Installed as the __main__.py of /usr/local/lib/inferops-node-health.pyz (inferops.node.health_package) and run
by inferops-node-health.service, which inferops-node-health.timer starts every few minutes:

  python3 -ES /usr/local/lib/inferops-node-health.pyz [CONFIG_JSON]   (default /etc/inferops/node-health.json)

What runs is the audit's own code, not a copy: the info modules of playbooks/tasks/audit_host.yml (their
main(), in check mode, with the arguments that play gives them) read the host, and audit_catalogue.evaluate_host
judges what they returned against the values the role rendered at deploy time from the inventory, exactly as the
audit_host action does on the controller. Only the fleet checks, which compare hosts, are not run.

The config file (JSON, written by the role): ``expected`` (audit_host's ``expected`` for this host),
``reads`` (info module -> its arguments; a module not listed is "not run on this host", as in the audit),
``textfile`` (the file to write), ``repository`` (the model repository whose page-cache residency is published,
or null), ``labels`` (the Kubernetes label gate: ``file``, ``label``, ``held``; or null), ``warmup_status`` (the
warmup role's traffic status file, whose last ``done`` is published; or null). The role renders it
with module_utils/health/node_health.py's config().

Writes the textfile atomically at the end of every completed run, whatever the checks found (exit 0); a run
that cannot complete exits 1 and leaves the previous file, which then ages (InferopsHealthCheckStale). With the
label gate, a run that finds the node not ready takes ``label`` out of the k8s_node_labels feature file and the
first ready run puts it back (the rule: node_labels.health_gate).
"""
import contextlib
import importlib
import io
import json
import os
import sys
import time

from ansible.module_utils import basic

from ansible_collections.inferops.node.plugins.module_utils.audit import check as audit, catalogue as audit_catalogue, outputs as audit_outputs
from ansible_collections.inferops.node.plugins.module_utils.common import textfile
from ansible_collections.inferops.node.plugins.module_utils.health import node_health
from ansible_collections.inferops.node.plugins.module_utils.serving import node_labels
from ansible_collections.inferops.node.plugins.module_utils.storage import page_cache

CONFIG = '/etc/inferops/node-health.json'
MODULES = 'ansible_collections.inferops.node.plugins.modules.'


def run_module(name, args):
    """The registered result of info module ``name`` run with ``args``, as Ansible would register it: a
    module that fails gives ``{'failed': True, 'msg': ...}`` and its checks are NOT_CHECKED, as in the audit."""
    payload = dict(args)
    # Check mode: the modules change nothing, whatever they are asked. no_log: AnsibleModule logs every
    # invocation to syslog otherwise - a line per module every few minutes in the journal.
    payload.update(_ansible_check_mode=True, _ansible_no_log=True)
    basic._ANSIBLE_ARGS = json.dumps({'ANSIBLE_MODULE_ARGS': payload}).encode('utf-8')
    if hasattr(basic, '_ANSIBLE_PROFILE'):  # ansible-core 2.19+: how the arguments and result are encoded
        basic._ANSIBLE_PROFILE = 'legacy'
    out = io.StringIO()
    try:
        module = importlib.import_module(MODULES + name)
        with contextlib.redirect_stdout(out):
            module.main()
    except SystemExit:
        pass
    except Exception as exc:  # a module that breaks is a read that failed, not a run that failed
        return {'failed': True, 'msg': '%s: %s' % (type(exc).__name__, exc)}
    finally:
        basic._ANSIBLE_ARGS = None
    text = out.getvalue().strip()
    try:
        return json.loads(text[text.index('{'):])
    except ValueError:
        return {'failed': True, 'msg': 'no result from the module: %r' % text[-200:]}


def page_cache_ratio(repository):
    """The repository's page-cache residency, 0 to 1; None when not measured (no repository, nothing in it, or
    it cannot be read: the series is then absent, and no alert is raised on a guess)."""
    if not repository:
        return None
    try:
        return node_health.residency_ratio(repository)
    except (OSError, page_cache.PageCacheError) as exc:
        print('inferops-node-health: page-cache residency of %s not measured: %s' % (repository, exc))
        return None


def write_atomic(path, content):
    textfile.replace_text(path, content, prefix='.inferops-health.')


def read(path):
    try:
        with open(path) as handle:
            return handle.read()
    except OSError:
        return None


def label_gate(gate, ready):
    """Apply node_labels.health_gate to the k8s_node_labels feature file; returns what it did. A gate that cannot
    do its part (an unwritable directory, a broken hold) says so and the run goes on: the textfile, and the alerts
    on it, matter more than the label."""
    try:
        hold = read(gate['held'])
        plan = node_labels.health_gate(read(gate['file']), json.loads(hold) if hold else None, gate['label'], ready)
        if plan['content'] is not None:
            write_atomic(gate['file'], plan['content'])
        if plan['hold'] is None and hold is not None:
            os.unlink(gate['held'])
        elif plan['hold'] is not None and plan['action'] == 'removed':
            write_atomic(gate['held'], json.dumps(plan['hold']))
    except (OSError, ValueError) as exc:
        return 'FAILED (%s: %s)' % (type(exc).__name__, exc)
    return plan['action']


def main(argv):
    started = time.time()
    try:
        with open(argv[1] if len(argv) > 1 else CONFIG) as handle:
            config = json.load(handle)
        reads = dict((name, run_module(name, args)) for name, args in sorted(config['reads'].items()))
        results = audit_catalogue.evaluate_host(reads, config['expected'])
        ratio = page_cache_ratio(config.get('repository'))
        ready = audit.worst(results) != 'FAIL'
        gate = label_gate(config['labels'], ready) if config.get('labels') else None
        finished = time.time()
        write_atomic(config['textfile'], audit_outputs.health_textfile(
            results, finished, finished - started, ratio, config.get('repository'),
            node_health.warmup_success(config.get('warmup_status'))))
    except Exception as exc:  # the previous file stays and ages: InferopsHealthCheckStale
        print('inferops-node-health: run not completed, textfile left as it was: %s: %s' % (type(exc).__name__, exc))
        return 1
    counts = audit.summary(results)
    print('inferops-node-health: %s in %.1f s (%s)%s%s' % (
        'ready' if ready else 'NOT READY', finished - started,
        ', '.join('%d %s' % (counts[s], s) for s in audit.STATUSES if counts[s]),
        '; label %s: %s' % (config['labels']['label'], gate) if gate else '',
        '; ' + audit.why(results) if not ready else ''))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
