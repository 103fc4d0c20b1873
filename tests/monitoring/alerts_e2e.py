#!/usr/bin/env python
"""The shipped alert rules end to end against a lab guest (issue 31, item 5): faults in, notifications out.

On the controller, on loopback: Debian's Alertmanager routing every alert to a webhook receiver this script
runs, and Debian's Prometheus loading ``monitoring/prometheus/inferops-alerts.yml`` unchanged with the scrape
jobs ``playbooks/scrape_config.yml`` rendered from the inventory. Each loopback target of those jobs (a lab
guest's ``ansible_host`` is 127.0.0.1, Triton binds there in the lab) is reached through an SSH port forward
from the same port on the controller to the same port on the guest. Only the scrape and evaluation interval are
set here (5 s, so that the figures are the rules' ``for:`` and Alertmanager's, not a 30 s scrape). Then, on the
guest, faults at once, each with its fix::

  md      a member of the RAID10 (/dev/md/index) failed with mdadm --fail   -> InferopsMdArrayDegraded
          fixed: the member removed, its superblock cleared, added again; the rebuild ends
  fs      /data/models filled with one fallocate'd file to below 10 % free   -> InferopsFilesystemNearlyFull
          fixed: the file removed
  triton  the first Triton container stopped (docker stop)                  -> InferopsTritonDown
          fixed: docker start

For each: when the fault went in, when Alertmanager's notification of the alert (firing, for the guest)
reached the receiver, and the same for the fix and the resolved notification. The rules' own ``for:`` is part
of the figure (1m, 15m, 2m): nothing is shortened. Exit 0 only when every fault's alert fired and resolved.

Needs: a guest converged with the node_health role (node_exporter; the md and fs faults need md_raid_xfs's
arrays, the triton fault triton_compose's containers), ``prometheus`` and ``prometheus-alertmanager`` (Debian
packages) on the controller, the target ports free on the controller. Example, against a scenario's guest::

  ansible-playbook -i <inventory> playbooks/scrape_config.yml -e inferops_scrape_dir=/tmp/scrape
  python tests/monitoring/alerts_e2e.py --inventory <inventory> --host node1 \\
      --scrape-config /tmp/scrape/prometheus.yml --faults md,fs --out .cache/alerts-e2e.json
"""

from __future__ import annotations

import argparse
import http.server
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RULES = os.path.join(ROOT, 'monitoring', 'prometheus', 'inferops-alerts.yml')

# fault -> (the alert it must raise, the shell that injects it, the shell that fixes it).
FAULTS = {
    'md': ('InferopsMdArrayDegraded',
           'set -e; m=$(mdadm --detail --export /dev/md/index | sed -n "s/^MD_DEVICE_dev_[^_]*_DEV=//p" | head -n 1); '
           'echo "$m" > /run/alerts-e2e-md; mdadm /dev/md/index --fail "$m"',
           'set -e; m=$(cat /run/alerts-e2e-md); mdadm /dev/md/index --remove "$m"; mdadm --zero-superblock "$m"; '
           'mdadm /dev/md/index --add "$m"'),
    'fs': ('InferopsFilesystemNearlyFull',
           'set -e; avail=$(df -B1 --output=avail /data/models | tail -n 1); size=$(df -B1 --output=size /data/models '
           '| tail -n 1); fallocate -l $((avail - size / 20)) /data/models/.alerts-e2e-fill',
           'rm -f /data/models/.alerts-e2e-fill'),
    'triton': ('InferopsTritonDown',
               'set -e; c=$(docker ps --filter label=com.docker.compose.project --format "{{.Names}}" | sort | head -n 1); '
               'echo "$c" > /run/alerts-e2e-triton; docker stop "$c"',
               'docker start "$(cat /run/alerts-e2e-triton)"'),
}


def free_port():
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


def host_vars(inventory, host):
    out = subprocess.run(['ansible-inventory', '-i', inventory, '--host', host], check=True, capture_output=True,
                         text=True).stdout
    data = json.loads(out)
    key = data.get('ansible_ssh_private_key_file') or data.get('ansible_private_key_file')
    return dict(address=data.get('ansible_host', host), port=int(data.get('ansible_port', 22)),
                user=data.get('ansible_user', 'root'), key=key)


class Guest:
    def __init__(self, conn):
        self.conn = conn
        self.base = ['ssh', '-q', '-p', str(conn['port']), '-o', 'StrictHostKeyChecking=no', '-o',
                     'UserKnownHostsFile=/dev/null', '-o', 'BatchMode=yes', '-o', 'ConnectTimeout=60']
        if conn['key']:
            self.base += ['-i', conn['key']]
        self.target = '%s@%s' % (conn['user'], conn['address'])

    def run(self, script):
        proc = subprocess.run(self.base + [self.target, script], capture_output=True, text=True, check=False,
                              timeout=600)
        if proc.returncode != 0:
            raise RuntimeError('on the guest: %s\nrc=%d %s' % (script, proc.returncode, proc.stderr.strip()))
        return proc.stdout

    def forward(self, local_port, remote_port):
        return subprocess.Popen(self.base + ['-N', '-o', 'ExitOnForwardFailure=yes', '-L',
                                             '127.0.0.1:%d:127.0.0.1:%d' % (local_port, remote_port), self.target])


class Receiver(http.server.BaseHTTPRequestHandler):
    """Alertmanager's webhook: every notification with the time it arrived."""
    notifications = []
    lock = threading.Lock()

    def do_POST(self):  # noqa: N802 (http.server's name)
        body = json.loads(self.rfile.read(int(self.headers['Content-Length'])))
        with self.lock:
            self.notifications.append((time.time(), body))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


def seen(alert, status, node, since):
    """Arrival time of the first notification after ``since`` holding ``alert`` of ``node`` in ``status``."""
    with Receiver.lock:
        for arrived, body in Receiver.notifications:
            if arrived < since:
                continue
            for item in body.get('alerts', []):
                labels = item.get('labels', {})
                if labels.get('alertname') == alert and labels.get('node') == node and item.get('status') == status:
                    return arrived
    return None


def wait_for(alert, status, node, since, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline:
        arrived = seen(alert, status, node, since)
        if arrived:
            return arrived
        time.sleep(1)
    return None


def loopback_ports(scrape):
    """The ports of the rendered jobs' targets on 127.0.0.1: each is forwarded to the guest's same port."""
    ports = set()
    for job in scrape['scrape_configs']:
        for static in job.get('static_configs', []):
            for target in static.get('targets', []):
                host, port = target.rsplit(':', 1)
                if host in ('127.0.0.1', 'localhost'):
                    ports.add(int(port))
    return sorted(ports)


def start_servers(work, scrape, hook_port):
    am_port, prom_port = free_port(), free_port()
    am_config = os.path.join(work, 'alertmanager.yml')
    with open(am_config, 'w', encoding='utf-8') as handle:
        json.dump({'route': {'receiver': 'hook', 'group_by': ['alertname', 'node'], 'group_wait': '0s',
                             'group_interval': '10s', 'repeat_interval': '4h'},
                   'receivers': [{'name': 'hook', 'webhook_configs': [
                       {'url': 'http://127.0.0.1:%d/' % hook_port, 'send_resolved': True}]}]}, handle)
    prom_config = os.path.join(work, 'prometheus.yml')
    with open(prom_config, 'w', encoding='utf-8') as handle:
        json.dump(dict(scrape, **{
            'global': {'scrape_interval': '5s', 'evaluation_interval': '5s'},
            'rule_files': [RULES],
            'alerting': {'alertmanagers': [{'static_configs': [{'targets': ['127.0.0.1:%d' % am_port]}]}]}}), handle)
    subprocess.run(['promtool', 'check', 'config', prom_config], check=True, capture_output=True)
    log = open(os.path.join(work, 'servers.log'), 'w', encoding='utf-8')  # pylint: disable=consider-using-with
    procs = [
        subprocess.Popen(['prometheus-alertmanager', '--config.file=' + am_config,
                          '--storage.path=' + os.path.join(work, 'am'),
                          '--web.listen-address=127.0.0.1:%d' % am_port, '--cluster.listen-address='],
                         stdout=log, stderr=log),
        subprocess.Popen(['prometheus', '--config.file=' + prom_config,
                          '--storage.tsdb.path=' + os.path.join(work, 'tsdb'),
                          '--web.listen-address=127.0.0.1:%d' % prom_port], stdout=log, stderr=log),
    ]
    return procs, prom_port


def query(prom_port, expr):
    url = 'http://127.0.0.1:%d/api/v1/query?query=%s' % (prom_port, urllib.request.quote(expr))
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.loads(response.read())['data']['result']


def wait_scraped(prom_port, node, jobs):
    """Every job of the node up, and the health check's series there (180 s)."""
    deadline = time.time() + 180
    while time.time() < deadline:
        try:
            up = {r['metric']['job'] for r in query(prom_port, 'up{node="%s"} == 1' % node)}
            if up >= set(jobs) and query(prom_port, 'inferops_health_last_run_timestamp_seconds{node="%s"}' % node):
                return
        except OSError:
            pass
        time.sleep(2)
    raise RuntimeError('Prometheus did not scrape every job of %s (%s) with the health textfile within 180 s'
                       % (node, ', '.join(jobs)))


def run_faults(guest, prom_port, node, faults, timeout):
    """Inject every fault, wait for each alert; fix every fault, wait for each resolution."""
    firing = {r['metric']['alertname'] for r in query(prom_port, 'ALERTS{alertstate="firing",node="%s"}' % node)}
    print('firing before the faults: %s' % (sorted(firing) or 'none'))
    for name in faults:
        if FAULTS[name][0] in firing:
            raise RuntimeError('%s fires before its fault: fix the guest first' % FAULTS[name][0])
    results, injected, fixed = [], {}, {}
    for name in faults:
        guest.run(FAULTS[name][1])
        injected[name] = time.time()
        print('fault %s in at %s' % (name, time.strftime('%H:%M:%S', time.localtime(injected[name]))))
    for name in faults:
        arrived = wait_for(FAULTS[name][0], 'firing', node, injected[name], timeout)
        results.append(dict(fault=name, alert=FAULTS[name][0],
                            firing_after_s=round(arrived - injected[name], 1) if arrived else None))
        print('  %s: %s firing %s' % (name, FAULTS[name][0], 'after %.0f s' % (arrived - injected[name]) if arrived else 'NEVER'))
    for name in faults:
        guest.run(FAULTS[name][2])
        fixed[name] = time.time()
    for result in results:
        arrived = wait_for(result['alert'], 'resolved', node, fixed[result['fault']], timeout)
        result['resolved_after_s'] = round(arrived - fixed[result['fault']], 1) if arrived else None
        shown = 'after %.0f s' % (arrived - fixed[result['fault']]) if arrived else 'NEVER'
        print('  %s: %s resolved %s' % (result['fault'], result['alert'], shown))
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--inventory', required=True)
    parser.add_argument('--host', required=True)
    parser.add_argument('--scrape-config', required=True, help='prometheus.yml as playbooks/scrape_config.yml wrote it')
    parser.add_argument('--faults', default='md,fs', help='comma-separated, of: %s' % ', '.join(FAULTS))
    parser.add_argument('--timeout', type=int, default=1500, help='seconds to wait for each notification')
    parser.add_argument('--out', help='also write the figures here as JSON')
    args = parser.parse_args()
    faults = [name.strip() for name in args.faults.split(',') if name.strip()]
    if [name for name in faults if name not in FAULTS]:
        parser.error('faults are among: %s' % ', '.join(FAULTS))
    with open(args.scrape_config, encoding='utf-8') as handle:
        scrape = yaml.safe_load(handle)
    scrape = {'scrape_configs': [job for job in scrape['scrape_configs'] if job.get('static_configs')]}
    jobs = [job['job_name'] for job in scrape['scrape_configs']]

    guest = Guest(host_vars(args.inventory, args.host))
    work = tempfile.mkdtemp(prefix='alerts-e2e-')
    hook = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Receiver)
    threading.Thread(target=hook.serve_forever, daemon=True).start()
    tunnels = [guest.forward(port, port) for port in loopback_ports(scrape)]
    procs, prom_port = start_servers(work, scrape, hook.server_address[1])
    try:
        wait_scraped(prom_port, args.host, jobs)
        print('scraping %s: jobs %s' % (args.host, ', '.join(jobs)))
        results = run_faults(guest, prom_port, args.host, faults, args.timeout)
    finally:
        for proc in procs + tunnels:
            proc.terminate()
        hook.shutdown()
        shutil.rmtree(work, ignore_errors=True)
    report = dict(host=args.host, rules=os.path.relpath(RULES, ROOT), scrape_interval_s=5, evaluation_interval_s=5,
                  jobs=jobs, results=results, notifications=len(Receiver.notifications))
    if args.out:
        with open(args.out, 'w', encoding='utf-8') as handle:
            json.dump(report, handle, indent=2)
    print(json.dumps(report, indent=2))
    return 0 if all(r['firing_after_s'] is not None and r['resolved_after_s'] is not None for r in results) else 1


if __name__ == '__main__':
    sys.exit(main())
