# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Test glue for molecule/serving: run a rendered compose service without docker.

Reads ``services.<name>`` from the compose file that the triton_compose role wrote and
starts its exact ``command`` with the real tritonserver shipped in nvidia-pytriton:

* ``tritonserver`` (argv[0]) is the pytriton binary, laid out as in the NGC image under
  ``--triton-home`` (bin/, backends/python with the stub for this Python, caches/local),
  which is bind-mounted on /opt/tritonserver in a private mount namespace, so the
  default backend and cache directories of the command line are the real ones.
* every bind volume of the service is bind-mounted in that namespace at
  ``<state-dir>/<service>/mnt<target>`` (read-only when the volume is ``read_only``: the
  kernel refuses writes, as with ``:ro``) and the container path ``<target>`` is
  replaced by that path in the arguments. No other argument changes.
* ``cpuset`` becomes the CPU affinity, ``ulimits`` the rlimits, ``environment`` the
  environment (plus LD_LIBRARY_PATH for pytriton's libraries and the stub's libpython).
  Memory limits and GPU settings have no effect here (no docker, no GPU).

The process runs detached (own session), logging to ``<state-dir>/<service>/server.log``.
``start`` is idempotent: it prints JSON with ``changed`` false when the same command is
already running. ``stop``/``stop-all`` end the whole process group (server and python
backend stubs) with SIGTERM, then SIGKILL after a grace period, and anything left that
carries this state directory's marker in its environment.
"""

import argparse
import hashlib
import importlib.util
import json
import os
import resource
import shlex
import signal
import subprocess
import sys
import sysconfig
import time

import yaml

MARKER = 'INFEROPS_MOLECULE_SERVING'
RLIMITS = {
    'nofile': resource.RLIMIT_NOFILE, 'memlock': resource.RLIMIT_MEMLOCK,
    'stack': resource.RLIMIT_STACK, 'nproc': resource.RLIMIT_NPROC, 'core': resource.RLIMIT_CORE,
}


def expand_cpulist(text):
    cpus = set()
    for part in str(text).split(','):
        if '-' in part:
            low, high = part.split('-')
            cpus.update(range(int(low), int(high) + 1))
        elif part:
            cpus.add(int(part))
    return cpus


def pid_alive(pid):
    try:
        with open('/proc/%d/stat' % pid) as handle:
            return handle.read().split(') ')[-1].split()[0] != 'Z'
    except OSError:
        return False


def read_pid(path):
    try:
        with open(path) as handle:
            return int(handle.read().strip())
    except (OSError, ValueError):
        return None


def service_plan(args):
    with open(args.compose) as handle:
        project = yaml.safe_load(handle)
    svc = project['services'][args.service]
    command = [str(a) for a in svc['command']]
    if command[0] != 'tritonserver':
        raise SystemExit('services.%s.command does not start with tritonserver: %r' % (args.service, command))
    state = os.path.join(args.state_dir, args.service)
    mounts = []
    argv = list(command)
    for vol in svc.get('volumes') or []:
        if not isinstance(vol, dict) or vol.get('type') != 'bind':
            raise SystemExit('only long-syntax bind volumes are supported: %r' % (vol,))
        where = os.path.join(state, 'mnt' + vol['target'])
        mounts.append({'source': vol['source'], 'where': where, 'read_only': bool(vol.get('read_only'))})
        target = vol['target'].rstrip('/')
        argv = [a.replace('=' + target, '=' + where) if a.endswith('=' + target) or ('=' + target + '/') in a
                else (where if a == target else a) for a in argv]
    env = {k: str(v) for k, v in (svc.get('environment') or {}).items()}
    return {
        'compose_command': command,
        'argv': argv,
        'mounts': mounts,
        'env': env,
        'cpuset': str(svc.get('cpuset') or ''),
        'ulimits': svc.get('ulimits') or {},
        'state': state,
    }


def fingerprint(plan, triton_home):
    blob = json.dumps([plan['argv'], plan['mounts'], plan['env'], plan['cpuset'], plan['ulimits'],
                       os.path.realpath(triton_home)], sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()


def stop_group(pid, grace):
    if pid is None or not pid_alive(pid):
        return False
    try:
        os.killpg(pid, signal.SIGTERM)
    except ProcessLookupError:
        return False
    deadline = time.time() + grace
    while time.time() < deadline and pid_alive(pid):
        time.sleep(0.2)
    if pid_alive(pid):
        try:
            os.killpg(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass
    return True


def marked_pids(state_dir):
    """Processes whose environment carries this state directory's marker."""
    wanted = ('%s=%s' % (MARKER, os.path.realpath(state_dir))).encode()
    found = []
    for entry in os.listdir('/proc'):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open('/proc/%s/environ' % entry, 'rb') as handle:
                if wanted in handle.read().split(b'\0'):
                    found.append(int(entry))
        except OSError:
            continue
    return found


def cmd_start(args):
    plan = service_plan(args)
    state = plan['state']
    os.makedirs(state, exist_ok=True)
    pidfile = os.path.join(state, 'pid')
    fpfile = os.path.join(state, 'fingerprint')
    want = fingerprint(plan, args.triton_home)
    pid = read_pid(pidfile)
    have = open(fpfile).read().strip() if os.path.exists(fpfile) else None
    if pid and pid_alive(pid) and have == want:
        print(json.dumps({'changed': False, 'pid': pid, 'argv': plan['argv']}))
        return 0
    if not pid:
        reason = 'not started yet'
    elif not pid_alive(pid):
        reason = 'process %d is gone' % pid
    else:
        reason = 'command line changed'
    stop_group(pid, args.grace)

    for mount in plan['mounts']:
        os.makedirs(mount['where'], exist_ok=True)
    setup = ['set -e', 'mount --make-rprivate /']
    opt = '/opt/tritonserver'
    # A private tmpfs on /opt holds the mount point: nothing is created on the host.
    setup.append('mount -t tmpfs -o size=1m,mode=0755 tmpfs /opt')
    setup.append('mkdir -p %s' % opt)
    setup.append('mount --bind %s %s' % (shlex.quote(args.triton_home), opt))
    for mount in plan['mounts']:
        setup.append('mount --bind %s %s' % (shlex.quote(mount['source']), shlex.quote(mount['where'])))
        if mount['read_only']:
            setup.append('mount -o remount,bind,ro %s' % shlex.quote(mount['where']))
    setup.append('exec %s/bin/tritonserver %s' % (opt, ' '.join(shlex.quote(a) for a in plan['argv'][1:])))
    script = '\n'.join(setup)

    env = dict(os.environ)
    env.update(plan['env'])
    libdir = sysconfig.get_config_var('LIBDIR')
    spec = importlib.util.find_spec('pytriton')
    libs = os.path.join(os.path.dirname(os.path.dirname(spec.origin)), 'nvidia_pytriton.libs') if spec else ''
    env['LD_LIBRARY_PATH'] = ':'.join(p for p in (libdir, args.pytriton_libs or libs, env.get('LD_LIBRARY_PATH')) if p)
    env['PATH'] = os.path.dirname(sys.executable) + ':' + env.get('PATH', '/usr/bin:/bin')
    env[MARKER] = os.path.realpath(args.state_dir)

    cpus = expand_cpulist(plan['cpuset']) if plan['cpuset'] else None
    limits = {}
    for name, value in plan['ulimits'].items():
        if name in RLIMITS:
            soft, hard = (value['soft'], value['hard']) if isinstance(value, dict) else (value, value)
            limits[RLIMITS[name]] = (resource.RLIM_INFINITY if int(soft) < 0 else int(soft),
                                     resource.RLIM_INFINITY if int(hard) < 0 else int(hard))

    notes = []
    for res, (soft, hard) in list(limits.items()):
        cur_soft, cur_hard = resource.getrlimit(res)
        if cur_hard != resource.RLIM_INFINITY and (hard == resource.RLIM_INFINITY or hard > cur_hard):
            # This sandbox may not raise hard limits (docker would): keep the host's ceiling.
            notes.append('rlimit %d: wanted %s/%s, capped at the hard limit %s' % (res, soft, hard, cur_hard))
            hard = cur_hard
            soft = cur_hard if soft == resource.RLIM_INFINITY else min(soft, cur_hard)
        limits[res] = (soft, hard)

    def preexec():
        for res, (soft, hard) in limits.items():
            resource.setrlimit(res, (soft, hard))
        if cpus:
            os.sched_setaffinity(0, cpus)

    log = open(os.path.join(state, 'server.log'), 'ab')
    log.write(('--- %s start (%s): %s\n' % (time.strftime('%F %T'), reason, ' '.join(plan['compose_command']))).encode())
    for note in notes:
        log.write(('--- %s\n' % note).encode())
    log.flush()
    proc = subprocess.Popen(['unshare', '--mount', '--propagation', 'private', 'sh', '-c', script],
                            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                            env=env, start_new_session=True, preexec_fn=preexec, close_fds=True)
    with open(pidfile, 'w') as handle:
        handle.write('%d\n' % proc.pid)
    with open(fpfile, 'w') as handle:
        handle.write(want + '\n')
    print(json.dumps({'changed': True, 'pid': proc.pid, 'argv': plan['argv'], 'reason': reason}))
    return 0


def cmd_stop(args):
    names = [args.service] if args.service else (
        sorted(os.listdir(args.state_dir)) if os.path.isdir(args.state_dir) else [])
    stopped = []
    for name in names:
        state = os.path.join(args.state_dir, name)
        pidfile = os.path.join(state, 'pid')
        if stop_group(read_pid(pidfile), args.grace):
            stopped.append(name)
        for path in (pidfile, os.path.join(state, 'fingerprint')):
            if os.path.exists(path):
                os.unlink(path)
    leftovers = marked_pids(args.state_dir) if not args.service else []
    for pid in leftovers:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    print(json.dumps({'changed': bool(stopped or leftovers), 'stopped': stopped, 'killed': leftovers}))
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n', maxsplit=1)[0])
    sub = parser.add_subparsers(dest='action', required=True)
    start = sub.add_parser('start')
    start.add_argument('--compose', required=True)
    start.add_argument('--service', required=True)
    start.add_argument('--triton-home', required=True)
    start.add_argument('--pytriton-libs', default='')
    start.add_argument('--state-dir', required=True)
    start.add_argument('--grace', type=float, default=30)
    stop = sub.add_parser('stop')
    stop.add_argument('--state-dir', required=True)
    stop.add_argument('--service', default='')
    stop.add_argument('--grace', type=float, default=30)
    args = parser.parse_args()
    return cmd_start(args) if args.action == 'start' else cmd_stop(args)


if __name__ == '__main__':
    sys.exit(main())
