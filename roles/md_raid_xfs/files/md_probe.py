# md_raid_xfs probe: python3 -c <this> '<request json>'; read-only, prints one JSON document.
# Request: {"arrays": [{"name", "devices", "mount"}], "files": [path], "units": [name],
#           "calendars": [str], "conf": path}
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys

ENV = dict(os.environ, LANG='C', LC_ALL='C')


def read(path):
    try:
        with open(path) as handle:
            return handle.read().strip()
    except OSError:
        return None


def run(args):
    try:
        proc = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV,
                              universal_newlines=True, check=False)
        return proc.returncode, proc.stdout
    except OSError:
        return 127, ''


def blkid(device):
    rc, out = run(['blkid', '-p', '-o', 'export', device])
    tags = {}
    for line in out.splitlines() if rc == 0 else []:
        key, sep, value = line.partition('=')
        if sep and key in ('TYPE', 'PTTYPE', 'UUID', 'LABEL', 'USAGE', 'VERSION'):
            tags[key] = value
    return tags


def number(value):
    return int(value) if value is not None and re.match(r'^-?\d+$', value) else value


def unescape(text):
    return re.sub(r'\\([0-7]{3})', lambda m: chr(int(m.group(1), 8)), text)


request = json.loads(sys.argv[1])
# Let udev finish pending events first: right after an array changes (a member failed or
# removed, an array assembled) udev rewrites /dev/md/<name> and the blkid tags, and a probe
# racing it sees a running array as missing. Waiting changes nothing on the host.
run(['udevadm', 'settle', '--timeout=60'])
mounts = {}
mounted_sources = {}
for line in (read('/proc/self/mountinfo') or '').splitlines():
    left, sep, right = line.partition(' - ')
    fields, rfields = left.split(), right.split()
    if len(fields) < 6 or len(rfields) < 3:
        continue
    point = unescape(fields[4])
    source = rfields[1]
    opts = fields[5].split(',') + [o for o in rfields[2].split(',') if o not in ('rw', 'ro')]
    mounts[point] = {'source': source, 'fstype': rfields[0], 'options': opts}
    if source.startswith('/dev/'):
        mounted_sources.setdefault(os.path.basename(os.path.realpath(source)), []).append(point)

fstab = {}
for line in (read('/etc/fstab') or '').splitlines():
    fields = line.split()
    if len(fields) >= 4 and not fields[0].startswith('#'):
        fstab[unescape(fields[1])] = (fields + ['0', '0'])[:6]


def md_info(kname):
    base = '/sys/block/%s/md/' % kname
    chunk = number(read(base + 'chunk_size'))
    return {'kname': kname, 'level': read(base + 'level'), 'raid_disks': number(read(base + 'raid_disks')),
            'chunk_kb': chunk // 1024 if isinstance(chunk, int) and chunk else None,
            'layout': number(read(base + 'layout')), 'degraded': number(read(base + 'degraded')),
            'array_state': read(base + 'array_state'), 'sync_action': read(base + 'sync_action'),
            'members': sorted(os.listdir('/sys/block/%s/slaves' % kname)) if os.path.isdir('/sys/block/%s/slaves' % kname) else [],
            'read_ahead_kb': number(read('/sys/block/%s/queue/read_ahead_kb' % kname))}


arrays = {}
for spec in request.get('arrays', []):
    name = spec['name']
    device = '/dev/md/%s' % name
    info = {'device': device, 'exists': os.path.exists(device), 'kname': None, 'blkid': {}}
    if info['exists']:
        kname = os.path.basename(os.path.realpath(device))
        info.update(md_info(kname))
        info['blkid'] = blkid(device)
        info['mounted_at'] = mounted_sources.get(kname, [])
    arrays[name] = info

members = {}
for spec in request.get('arrays', []):
    own = arrays[spec['name']]
    for path in spec.get('devices') or []:
        entry = {'array': spec['name'], 'exists': os.path.exists(path), 'device': None, 'kname': None,
                 'whole': False, 'usage': 'missing', 'detail': 'does not exist'}
        members.setdefault(path, entry)
        if not entry['exists']:
            continue
        real = os.path.realpath(path)
        kname = os.path.basename(real)
        entry.update(device=real, kname=kname)
        if not os.path.exists('/sys/class/block/%s' % kname) or not real.startswith('/dev/'):
            entry.update(usage='invalid', detail='is not a block device (%s)' % real)
            continue
        if os.path.exists('/sys/class/block/%s/partition' % kname):
            entry.update(usage='invalid', detail='is a partition (%s), not a whole device' % real)
            continue
        entry['whole'] = True
        holders = sorted(os.listdir('/sys/class/block/%s/holders' % kname))
        tags = blkid(real)
        entry.update(holders=holders, blkid=tags, size_bytes=number(read('/sys/class/block/%s/size' % kname)))
        if entry['size_bytes'] is not None:
            entry['size_bytes'] *= 512
        points = mounted_sources.get(kname, [])
        md_label = (tags.get('LABEL') or '').split(':')[-1] if tags.get('TYPE') == 'linux_raid_member' else None
        if points:
            entry.update(usage='busy', detail='is mounted at %s' % ', '.join(points))
        elif holders and not (own.get('kname') and holders == [own['kname']]):
            entry.update(usage='busy', detail='is held by %s' % ', '.join(holders))
        elif holders or md_label == spec['name']:
            entry.update(usage='ours', detail='member of md array %s' % spec['name'])
        elif tags.get('TYPE') == 'linux_raid_member':
            entry.update(usage='data', detail='carries the md superblock of another array (%s, UUID %s)' % (
                tags.get('LABEL'), tags.get('UUID')))
        elif tags.get('TYPE') or tags.get('PTTYPE'):
            what = ('a filesystem (%s' % tags['TYPE']) if tags.get('TYPE') else ('a partition table (%s' % tags['PTTYPE'])
            extra = ''.join(', %s %s' % (k, tags[k]) for k in ('UUID', 'LABEL') if tags.get(k))
            entry.update(usage='data', detail='holds %s%s)' % (what, extra))
        else:
            entry.update(usage='free', detail='free')

files = {}
for path in request.get('files', []):
    try:
        st = os.stat(path)
        with open(path, 'rb') as handle:
            digest = hashlib.sha1(handle.read()).hexdigest()
        files[path] = {'sha1': digest, 'mode': '%04o' % (st.st_mode & 0o7777), 'uid': st.st_uid, 'gid': st.st_gid}
    except OSError:
        files[path] = None

units = {}
if request.get('units'):
    proc = subprocess.run(['systemctl', 'show', '-p', 'Id', '-p', 'UnitFileState', '-p', 'ActiveState', '-p', 'LoadState']
                          + list(request['units']), stdout=subprocess.PIPE, universal_newlines=True, check=False)
    for unit, block in zip(request['units'], proc.stdout.strip().split('\n\n')):
        props = dict(line.split('=', 1) for line in block.splitlines() if '=' in line)
        units[unit] = {'enabled': props.get('UnitFileState') or ('not-found' if props.get('LoadState') == 'not-found' else ''),
                       'active': props.get('ActiveState', ''), 'load': props.get('LoadState', '')}

calendars = {}
for value in request.get('calendars', []):
    calendars[value] = run(['systemd-analyze', 'calendar', value])[0] == 0

release = os.uname().release
conf = request.get('conf') or '/etc/mdadm/mdadm.conf'
initrd = '/boot/initrd.img-%s' % release


def mtime(path):
    try:
        return os.stat(path).st_mtime
    except OSError:
        return None


autocheck = None
for line in (read('/etc/default/mdadm') or '').splitlines():
    match = re.match(r'^\s*AUTOCHECK=["\']?([^"\'\s]*)', line)
    if match:
        autocheck = match.group(1)

print(json.dumps({
    'arrays': arrays, 'members': members, 'mounts': mounts, 'fstab': fstab, 'files': files, 'units': units,
    'calendars': calendars, 'autocheck': autocheck,
    'bins': dict((b, shutil.which(b)) for b in ('mdadm', 'mkfs.xfs', 'xfs_info', 'wipefs', 'update-initramfs')),
    'mdcheck': os.path.exists('/usr/share/mdadm/mdcheck'),
    'initramfs': {'conf': conf, 'conf_mtime': mtime(conf), 'initrd': initrd, 'initrd_mtime': mtime(initrd)},
    'sysctl': {'speed_limit_min': number(read('/proc/sys/dev/raid/speed_limit_min')),
               'speed_limit_max': number(read('/proc/sys/dev/raid/speed_limit_max'))},
}))
