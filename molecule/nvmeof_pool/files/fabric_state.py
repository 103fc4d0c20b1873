"""Print the initiator's NVMe-oF state as JSON (run on the guest by verify)."""
import glob
import json
import os
import subprocess
import sys


def run(args):
    proc = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False,
                          universal_newlines=True, env=dict(os.environ, LC_ALL='C'))
    return proc.returncode, proc.stdout, proc.stderr


def read(path):
    try:
        with open(path) as handle:
            return handle.read().strip()
    except OSError:
        return None


def main():
    mount_point = sys.argv[1]
    model_file = sys.argv[2]
    state = {}
    rc, out, err = run(['nvme', 'list-subsys', '-o', 'json'])
    state['list_subsys'] = json.loads(out) if rc == 0 and out.strip() else []
    state['controllers'] = {}
    for ctrl in sorted(glob.glob('/sys/class/nvme/nvme*')):
        name = os.path.basename(ctrl)
        state['controllers'][name] = dict((attr, read('%s/%s' % (ctrl, attr))) for attr in (
            'transport', 'state', 'address', 'subsysnqn', 'queue_count', 'sqsize', 'hostnqn', 'hostid',
            'ctrl_loss_tmo', 'reconnect_delay'))
    state['namespaces'] = []
    for subsys in sorted(glob.glob('/sys/class/nvme-subsystem/nvme-subsys*')):
        for ns in sorted(glob.glob(subsys + '/nvme*n*')):
            name = os.path.basename(ns)
            if 'c' in name[4:]:
                continue
            rc, out, err = run(['blockdev', '--getra', '/dev/' + name])
            state['namespaces'].append({'name': name, 'device': '/dev/' + name, 'nsid': int(read(ns + '/nsid') or 0),
                                        'wwid': read(ns + '/wwid'), 'subsysnqn': read(subsys + '/subsysnqn'),
                                        'ra_sectors': int(out) if rc == 0 else None})
    rc, out, err = run(['findmnt', '-J', '-o', 'TARGET,SOURCE,FSTYPE,OPTIONS', mount_point])
    state['mount'] = json.loads(out)['filesystems'][0] if rc == 0 else None
    state['model_sha256'] = None
    if state['mount']:
        # Drop the page cache so the checksum reads through the fabric.
        with open('/proc/sys/vm/drop_caches', 'w') as handle:
            handle.write('3\n')
        rc, out, err = run(['sha256sum', model_file])
        state['model_sha256'] = out.split()[0] if rc == 0 else None
    rc, out, err = run(['systemctl', 'show', '--property=Id,ActiveState,UnitFileState', 'inferops-nvmf-connect@*'])
    state['units'] = {}
    for block in out.strip().split('\n\n'):
        props = dict(line.split('=', 1) for line in block.splitlines() if '=' in line)
        if props.get('Id'):
            state['units'][props['Id']] = {'active': props.get('ActiveState'), 'enabled': props.get('UnitFileState')}
    state['hostnqn'] = read('/etc/nvme/hostnqn')
    state['hostid'] = read('/etc/nvme/hostid')
    state['fstab'] = [line for line in (read('/etc/fstab') or '').splitlines() if mount_point in line]
    # The kernel's own account of dropped and re-established fabric connections
    # since boot: a loaded lab host can stall a guest past the 5 s keep-alive, and
    # a reconnect within ctrl_loss_tmo is the kernel doing its job - the log shows it.
    rc, out, err = run(['dmesg'])
    state['reconnects'] = [line for line in out.splitlines()
                           if 'nvme' in line and ('error recovery' in line or 'reconnect' in line.lower())][-10:]
    json.dump(state, sys.stdout, indent=1, sort_keys=True)


main()
