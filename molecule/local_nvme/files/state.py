# Verifier probe for molecule/local_nvme: the real state of the node as JSON,
# read from /sys, /proc, mdadm, xfs_info, findmnt and systemctl. Read-only.
import json
import os
import re
import subprocess


def read(path):
    try:
        with open(path) as handle:
            return handle.read().strip()
    except OSError:
        return None


def run(*args):
    proc = subprocess.run(list(args), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, check=False, env=dict(os.environ, LC_ALL='C'))
    return proc.stdout


state = {'namespaces': {}, 'arrays': {}, 'mounts': {}, 'irqs': {}, 'units': {}, 'files': {}}
for kname in sorted(os.listdir('/sys/block')):
    if re.match(r'^nvme\d+n\d+$', kname):
        base = '/sys/block/%s/' % kname
        state['namespaces'][kname] = {
            'serial': read(base + 'device/serial'),
            'scheduler': read(base + 'queue/scheduler'),
            'read_ahead_kb': read(base + 'queue/read_ahead_kb'),
        }
state['mdstat'] = read('/proc/mdstat')
# NVMe serial -> the name of its controller's admin queue IRQ at this boot (<controller>q0).
state['admin_queues'] = dict((read('/sys/class/nvme/%s/serial' % c), c + 'q0') for c in sorted(os.listdir('/sys/class/nvme')))
for name in ('models', 'index'):
    dev = '/dev/md/' + name
    if not os.path.exists(dev):
        continue
    kname = os.path.basename(os.path.realpath(dev))
    detail = run('mdadm', '--detail', dev)
    fields = dict((k.strip(), v.strip()) for k, sep, v in
                  (line.partition(' : ') for line in detail.splitlines()) if sep)
    members = sorted(os.path.basename(os.path.realpath(line.split()[-1]))
                     for line in detail.splitlines() if re.search(r'active sync.*\s/dev/\S+$', line))
    base = '/sys/block/%s/' % kname
    state['arrays'][name] = {
        'kname': kname, 'level': fields.get('Raid Level'), 'state': fields.get('State'),
        'name': fields.get('Name', '').split()[0] if fields.get('Name') else None,
        'uuid': fields.get('UUID'), 'created': fields.get('Creation Time'),
        'chunk': fields.get('Chunk Size'), 'raid_devices': fields.get('Raid Devices'),
        'active_members': members, 'sync_action': read(base + 'md/sync_action'),
        'degraded': read(base + 'md/degraded'), 'read_ahead_kb': read(base + 'queue/read_ahead_kb'),
    }
by_id = '/dev/disk/by-id'
state['by_id'] = dict((n, os.path.basename(os.path.realpath(os.path.join(by_id, n))))
                      for n in os.listdir(by_id) if n.startswith('nvme-QEMU_NVMe_Ctrl_') and not n.endswith('_1'))
for point in ('/data/models', '/data/index'):
    line = run('findmnt', '-rn', '-o', 'SOURCE,FSTYPE,OPTIONS', point).split()
    xfs = run('xfs_info', point) if line else ''
    match = re.search(r'sunit=(\d+)\s+swidth=(\d+) blks', xfs)
    bsize = re.search(r'^data\s+=\s+bsize=(\d+)', xfs, re.M)
    state['mounts'][point] = {
        'source': line[0] if line else None, 'fstype': line[1] if line else None,
        'options': line[2].split(',') if line else [],
        'sunit': int(match.group(1)) if match else None, 'swidth': int(match.group(2)) if match else None,
        'bsize': int(bsize.group(1)) if bsize else None,
    }
state['fstab'] = [l.split() for l in (read('/etc/fstab') or '').splitlines() if l.startswith('UUID=')]
state['mdadm_conf'] = [l for l in (read('/etc/mdadm/mdadm.conf') or '').splitlines() if l.startswith('ARRAY')]
for line in (read('/proc/interrupts') or '').splitlines()[1:]:
    match = re.match(r'^\s*(\d+):', line)
    if match:
        irq = match.group(1)
        name = read('/sys/kernel/irq/%s/actions' % irq) or ''
        if name.startswith('nvme'):
            state['irqs'][name] = {'irq': int(irq), 'affinity': read('/proc/irq/%s/smp_affinity_list' % irq)}
units = ['inferops-irq-pin.service', 'irqbalance.service', 'fstrim.timer', 'mdcheck_start.timer',
         'mdcheck_continue.timer', 'inferops-mdcheck-start.timer', 'inferops-mdcheck-continue.timer']
show = run('systemctl', 'show', '-p', 'UnitFileState', '-p', 'ActiveState', *units).strip().split('\n\n')
for unit, block in zip(units, show):
    props = dict(l.split('=', 1) for l in block.splitlines() if '=' in l)
    state['units'][unit] = '%s/%s' % (props.get('UnitFileState'), props.get('ActiveState'))
state['irqbalance_cmdline'] = run('systemctl', 'show', '-p', 'ExecMainPID', '--value', 'irqbalance.service').strip()
pid = state['irqbalance_cmdline']
state['irqbalance_cmdline'] = (read('/proc/%s/cmdline' % pid) or '').replace('\0', ' ') if pid and pid != '0' else ''
state['sysctl'] = {'min': read('/proc/sys/dev/raid/speed_limit_min'), 'max': read('/proc/sys/dev/raid/speed_limit_max')}
state['autocheck'] = re.findall(r'^AUTOCHECK=(\S+)', read('/etc/default/mdadm') or '', re.M)
state['udev_rules'] = {
    'nvme': read('/etc/udev/rules.d/61-inferops-nvme-sched.rules'),
    'readahead': read('/etc/udev/rules.d/61-inferops-readahead.rules'),
}
managed = ['/etc/udev/rules.d/61-inferops-nvme-sched.rules', '/etc/udev/rules.d/61-inferops-readahead.rules',
           '/etc/mdadm/mdadm.conf', '/etc/fstab', '/etc/default/irqbalance', '/etc/default/mdadm',
           '/etc/inferops/irq-affinity.json', '/usr/local/sbin/inferops-irq-pin', '/usr/local/lib/inferops-irq-pin.pyz',
           '/etc/sysctl.d/91-inferops-md-raid.conf',
           '/etc/modules-load.d/inferops-md-raid.conf', '/etc/systemd/system/inferops-irq-pin.service',
           '/etc/systemd/system/inferops-mdcheck-start.service', '/etc/systemd/system/inferops-mdcheck-start.timer',
           '/etc/systemd/system/inferops-mdcheck-continue.service', '/etc/systemd/system/inferops-mdcheck-continue.timer']
for path in managed:
    try:
        st = os.stat(path)
        with open(path, 'rb') as handle:
            state['files'][path] = '%s %d' % (__import__('hashlib').sha256(handle.read()).hexdigest(), st.st_mtime_ns)
    except OSError:
        state['files'][path] = None
# The rest of the node, for "a refusal changes nothing at all": every file under
# /etc and /usr/local (checksum and mtime), the kernel parameters the profiles
# set, THP and the loaded modules.
state['node'] = {'files': {}, 'sysctl': {}}
for top in ('/etc', '/usr/local'):
    for folder, dirs, names in os.walk(top):
        dirs.sort()
        for name in sorted(names):
            path = os.path.join(folder, name)
            if path == '/etc/adjtime' or not os.path.isfile(path) or os.path.islink(path):
                continue
            with open(path, 'rb') as handle:
                digest = __import__('hashlib').sha256(handle.read()).hexdigest()
            state['node']['files'][path] = '%s %d' % (digest, os.stat(path).st_mtime_ns)
for key in ('vm/swappiness', 'vm/dirty_ratio', 'vm/dirty_background_ratio', 'vm/max_map_count',
            'vm/vfs_cache_pressure', 'vm/nr_hugepages', 'fs/file-max', 'net/core/somaxconn',
            'net/core/netdev_max_backlog', 'net/ipv4/tcp_congestion_control', 'net/ipv4/tcp_tw_reuse',
            'net/ipv4/tcp_fin_timeout'):
    state['node']['sysctl'][key] = read('/proc/sys/' + key)
state['node']['thp'] = read('/sys/kernel/mm/transparent_hugepage/enabled')
state['node']['modules'] = sorted(line.split()[0] for line in (read('/proc/modules') or '').splitlines())
print(json.dumps(state))
