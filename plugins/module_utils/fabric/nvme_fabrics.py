# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""NVMe over Fabrics host side: what the kernel has connected, read from sysfs.

Connection state comes from ``/sys/class/nvme/nvme*/{transport,address,subsysnqn,state,
hostnqn,hostid,queue_count,sqsize,ctrl_loss_tmo,reconnect_delay,kato}`` and
``/sys/class/nvme-subsystem/nvme-subsys*`` - never from nvme-cli's messages.

* ``controllers()`` - every fabrics controller with its attributes and subsystem.
* ``subsystems()`` - every NVMe subsystem: NQN, controllers, namespace block devices;
  ``subsystem_controllers()`` - which controllers each subsystem has.
* ``namespace(kname)`` - a namespace block device's nsid, size, wwid (``nvme_devices`` reads them here too);
  ``namespace_transport(kname)`` - the transport under it (``blockdev.device_kind``).
* ``matches(ctrl, conn)`` - whether a controller is the connection ``conn`` describes.
* ``expected_ctrl_loss_tmo(tmo, delay)`` - the value the kernel reports for a setting.
* ``parse_discovery(text)`` - records of ``nvme discover -o json``.
* ``device_in_use(kname)`` - mounts, swap, holders of a namespace block device.

The rules of a connection's input, shared by the ``nvme_connect`` module (which raises the
first refusal) and the ``nvmeof_initiator`` role (filters in ``plugins/filter/nvme_fabrics.py``,
every refusal at once):

* ``check_connection(item, prefix)`` - one connection's fields (NQN, addresses, port, interface,
  name, limits, DH-HMAC-CHAP); ``duplicate_connections(conns, variable)`` - names and
  connections given twice; ``default_name(conn)`` - the name of a connection's boot unit.
* ``host_identity()`` / ``identity_errors()`` - a host's NQN and ID (given, on file, or generated)
  and what is wrong with them, duplicates across hosts included.
* ``initiator_errors()`` / ``initiator_connections()`` / ``identity_duplicates()`` /
  ``mount_plan()`` - the role's whole input, what it hands ``nvme_connect``, host NQNs or IDs
  shared by two hosts, and its mounts resolved against the connections; ``mount_filesystems()`` -
  those mounts checked against the filesystems read on the namespaces, by UUID.

Paths go through ``module_utils.sysfs`` so unit tests can point them at a recorded tree.
"""

from __future__ import annotations

import json
import re
import uuid

# Relative imports: this file ships in the boot packages (common/boot_package.py), run with python3 -ES outside
# Ansible as the package inferops: only the standard library and other module_utils files, imported relatively.
from ..common import sysfs
from ..storage import nvme_common as common
from ..common.cpulist import CpuListError, parse_cpulist
from ..storage.mount_options import option_errors

__all__ = [
    'parse_address', 'controllers', 'subsystems', 'subsystem_controllers', 'namespace', 'namespace_transport',
    'matches', 'expected_ctrl_loss_tmo',
    'parse_discovery', 'device_in_use', 'online_cpus', 'CONNECTED_STATES', 'DEFAULT_SVCID',
    'default_name', 'connection_key', 'describe', 'check_connection', 'duplicate_connections',
    'initiator_errors', 'initiator_connections', 'identity_duplicates', 'mount_plan', 'mount_filesystems',
    'host_identity', 'identity_errors', 'HOSTNQN_FILE', 'HOSTID_FILE',
]

HOSTNQN_FILE = '/etc/nvme/hostnqn'
HOSTID_FILE = '/etc/nvme/hostid'
# The namespace of Ansible's to_uuid filter: host IDs derived from a host NQN before this
# code moved out of the role's templates stay the same.
_TO_UUID_NAMESPACE = uuid.UUID('361E6D51-FAEC-444A-9079-341386DA8E2E')
_UUID_NQN_RE = re.compile(r'^nqn\.2014-08\.org\.nvmexpress:uuid:(?P<uuid>[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-'
                          r'[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$')

DEFAULT_SVCID = 4420
CONNECTION_LIMITS = ('nr_io_queues', 'queue_size', 'ctrl_loss_tmo', 'reconnect_delay', 'keep_alive_tmo')

CLASS_NVME = '/sys/class/nvme'
CLASS_SUBSYS = '/sys/class/nvme-subsystem'
# A controller in one of these states exists for the kernel (it reconnects by itself while
# ctrl_loss_tmo lasts); "deleting" and "dead" ones are on their way out.
CONNECTED_STATES = ('live', 'connecting', 'resetting', 'new')

_CTRL_RE = re.compile(r'^nvme\d+$')
_NS_RE = re.compile(r'^nvme\d+n\d+$')
_PATH_RE = re.compile(r'^nvme\d+c\d+n\d+$')


def parse_address(text):
    """``traddr=10.0.0.1,trsvcid=4420,src_addr=10.0.0.2`` -> dict (empty for None)."""
    result = {}
    for part in (text or '').strip().split(','):
        if '=' in part:
            key, value = part.split('=', 1)
            result[key.strip()] = value.strip()
    return result


def _int(value):
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _tmo(value):
    """ctrl_loss_tmo / fast_io_fail_tmo: an int, or -1 for ``off`` (forever)."""
    if value is None:
        return None
    if value.strip() == 'off':
        return -1
    return _int(value)


def subsystem_controllers():
    """Every NVMe subsystem (``/sys/class/nvme-subsystem``) -> the names of its controllers, sorted."""
    return dict((subsys, [e for e in sysfs.listdir('%s/%s' % (CLASS_SUBSYS, subsys)) if _CTRL_RE.match(e)])
                for subsys in sysfs.listdir(CLASS_SUBSYS))


def namespace_transport(kname):
    """The transport (pcie, tcp, rdma, fc, loop) of NVMe namespace block device ``kname`` (``nvme0n1``, or a
    multipath path ``nvme0c1n1``): its controller's, or for a native-multipath head (whose ``device`` is the
    subsystem) that of its subsystem's first controller; None when sysfs does not say."""
    transport = sysfs.read_attr('/sys/class/block/%s/device/transport' % kname)
    if transport is None:
        for subsys, ctrls in subsystem_controllers().items():
            if ctrls and sysfs.exists('%s/%s/%s' % (CLASS_SUBSYS, subsys, kname)):
                transport = sysfs.read_attr('%s/%s/%s/transport' % (CLASS_SUBSYS, subsys, ctrls[0]))
                break
    return (transport or '').strip() or None


def controllers():
    """Every controller under /sys/class/nvme, fabrics or not, as dicts sorted by name."""
    owner = dict((ctrl, subsys) for subsys, ctrls in subsystem_controllers().items() for ctrl in ctrls)
    result = []
    for name in sysfs.listdir(CLASS_NVME):
        if not _CTRL_RE.match(name):
            continue
        base = '%s/%s' % (CLASS_NVME, name)

        def attr(key, base=base):
            value = sysfs.read_attr('%s/%s' % (base, key))
            return value.strip() if value is not None else None

        transport = attr('transport')
        address = attr('address')
        queue_count = _int(attr('queue_count'))
        sqsize = _int(attr('sqsize'))
        paths = []
        for entry in sysfs.listdir(base):
            if _PATH_RE.match(entry):
                paths.append({'name': entry, 'ana_state': attr('%s/ana_state' % entry)})
        result.append({
            'name': name,
            'transport': transport,
            'address': address,
            'addr': parse_address(address),
            'subsysnqn': attr('subsysnqn'),
            'subsystem': owner.get(name),
            'state': attr('state'),
            'cntrltype': attr('cntrltype'),
            'hostnqn': attr('hostnqn'),
            'hostid': attr('hostid'),
            'cntlid': _int(attr('cntlid')),
            'queue_count': queue_count,
            'io_queues': queue_count - 1 if queue_count else None,
            'queue_size': sqsize + 1 if sqsize is not None else None,
            'ctrl_loss_tmo': _tmo(attr('ctrl_loss_tmo')),
            'reconnect_delay': _int(attr('reconnect_delay')),
            'keep_alive_tmo': _int(attr('kato')),
            'dhchap': sysfs.exists('%s/dhchap_secret' % base),
            'paths': paths,
        })
    return result


def namespace(kname):
    """NVMe namespace block device ``kname`` as ``/sys/class/block/<kname>`` shows it: ``name``, ``device``,
    ``exists`` (its node in /dev), ``nsid``, ``size_bytes``, ``wwid``, ``read_ahead_kb`` (None where unknown)."""
    base = '/sys/class/block/%s' % kname
    return {
        'name': kname,
        'device': '/dev/%s' % kname,
        'exists': sysfs.exists('/dev/%s' % kname),
        'nsid': sysfs.read_int('%s/nsid' % base),
        'size_bytes': sysfs.block_size_bytes(kname),
        'wwid': (sysfs.read_attr('%s/wwid' % base) or '').strip() or None,
        'read_ahead_kb': sysfs.read_int('%s/queue/read_ahead_kb' % base),
    }


def subsystems(ctrls=None):
    """NVMe subsystems keyed by name (``nvme-subsys0``): nqn, controller names, namespaces.

    Namespaces are the block devices the host uses: the multipath heads under the subsystem
    (``nvme0n1``), or the per-controller namespaces when native multipath is off.
    """
    if ctrls is None:
        ctrls = controllers()
    result = {}
    for name, members in subsystem_controllers().items():
        base = '%s/%s' % (CLASS_SUBSYS, name)
        namespaces = [namespace(e) for e in sysfs.listdir(base) if _NS_RE.match(e)]
        if not namespaces:
            for ctrl in members:
                namespaces.extend(namespace(e) for e in sysfs.listdir('%s/%s' % (CLASS_NVME, ctrl)) if _NS_RE.match(e))
        namespaces.sort(key=lambda ns: (ns['nsid'] or 0, ns['name']))
        result[name] = {
            'name': name,
            'nqn': (sysfs.read_attr('%s/subsysnqn' % base) or '').strip(),
            'controllers': members,
            'namespaces': namespaces,
        }
    return result


def matches(ctrl, conn):
    """Whether controller ``ctrl`` (from ``controllers()``) is connection ``conn``.

    ``conn`` holds the validated transport, traddr, trsvcid (None for fc), subnqn, hostnqn and
    the optional host_traddr / host_iface. A controller being deleted never matches.
    """
    if ctrl['state'] not in CONNECTED_STATES or ctrl['cntrltype'] == 'discovery':
        return False
    if ctrl['transport'] != conn['transport'] or ctrl['subsysnqn'] != conn['subnqn']:
        return False
    addr = ctrl['addr']
    if addr.get('traddr', '').lower() != conn['traddr'].lower():
        return False
    if conn.get('trsvcid') is not None and addr.get('trsvcid') != str(conn['trsvcid']):
        return False
    if conn.get('hostnqn') and ctrl.get('hostnqn') and ctrl['hostnqn'] != conn['hostnqn']:
        return False
    if conn.get('host_traddr') and addr.get('host_traddr') != conn['host_traddr']:
        return False
    if conn.get('host_iface') and addr.get('host_iface') != conn['host_iface']:
        return False
    return True


def expected_ctrl_loss_tmo(tmo, delay):
    """The ctrl_loss_tmo the kernel reports: it keeps ceil(tmo / delay) reconnect attempts.

    -1 (or any negative value) means reconnect forever, shown as ``off``.
    """
    if tmo is None:
        return None
    if tmo < 0:
        return -1
    if not delay:
        return tmo
    return -(-tmo // delay) * delay


def parse_discovery(text):
    """Records of ``nvme discover -o json`` (nvme-cli 2.x): list of dicts; ValueError if not JSON."""
    data = json.loads(text)
    records = data.get('records', []) if isinstance(data, dict) else []
    result = []
    for rec in records:
        result.append({
            'trtype': rec.get('trtype'),
            'adrfam': rec.get('adrfam'),
            'subtype': rec.get('subtype'),
            'treq': rec.get('treq'),
            'portid': rec.get('portid'),
            'trsvcid': rec.get('trsvcid'),
            'subnqn': rec.get('subnqn'),
            'traddr': rec.get('traddr'),
            'sectype': rec.get('sectype'),
        })
    return result


def _dev_numbers(kname):
    numbers = set()
    dev = sysfs.read_attr('/sys/class/block/%s/dev' % kname)
    if dev:
        numbers.add(dev.strip())
    for entry in sysfs.listdir('/sys/class/block/%s' % kname):
        if entry.startswith(kname) and entry != kname:
            part = sysfs.read_attr('/sys/class/block/%s/%s/dev' % (kname, entry))
            if part:
                numbers.add(part.strip())
    return numbers


def device_in_use(kname):
    """Reasons ``kname`` (or a partition of it) is in use: mount points, swap, holders."""
    reasons = []
    numbers = _dev_numbers(kname)
    mountinfo = sysfs.read_attr('/proc/self/mountinfo') or ''
    for line in mountinfo.splitlines():
        fields = line.split()
        if len(fields) > 4 and fields[2] in numbers:
            reasons.append('mounted on %s' % fields[4])
    swaps = sysfs.read_attr('/proc/swaps') or ''
    for line in swaps.splitlines()[1:]:
        fields = line.split()
        if fields and fields[0].startswith('/dev/%s' % kname):
            reasons.append('swap %s' % fields[0])
    for holder in sysfs.listdir('/sys/class/block/%s/holders' % kname):
        reasons.append('held by %s' % holder)
    return reasons


def online_cpus():
    """Number of online CPUs (``/sys/devices/system/cpu/online``, cpulist's parser), None when unknown."""
    try:
        return len(parse_cpulist(sysfs.read_attr(sysfs.ONLINE_CPUS) or '')) or None
    except CpuListError:
        return None


# ------------------------------------------------------------------ input rules

def default_name(conn):
    """``<last part of subnqn>-<transport>-<traddr>[-<trsvcid>][-<host_iface>][-<host_traddr>]``."""
    tail = re.sub(r'[^A-Za-z0-9._-]+', '-', conn['subnqn'].rsplit(':', 1)[-1]).strip('-.')[:48] or 'subsystem'
    parts = [tail, conn['transport'], conn['traddr'].replace(':', '_')]
    if conn.get('trsvcid') is not None:
        parts.append(str(conn['trsvcid']))
    if conn.get('host_iface'):
        parts.append(conn['host_iface'])
    if conn.get('host_traddr'):
        parts.append(conn['host_traddr'].replace(':', '_'))
    name = '-'.join(parts)
    return re.sub(r'[^A-Za-z0-9._-]', '_', name)[:100]


def connection_key(conn):
    """What makes two connections the same one for the kernel."""
    return (conn['transport'], conn['traddr'], conn.get('trsvcid'), conn['subnqn'],
            conn.get('host_iface') or '', conn.get('host_traddr') or '', conn.get('hostnqn'))


def describe(conn):
    """``tcp 10.77.0.10:4420``."""
    where = '%s %s' % (conn['transport'], conn['traddr'])
    if conn.get('trsvcid') is not None:
        where += ':%s' % conn['trsvcid']
    return where


def check_connection(item, prefix):
    """One connection's input -> normalised fields (transport, traddr, trsvcid, host_traddr,
    host_iface, subnqn, limits, secrets, name); raises ``NvmeInputError`` naming ``prefix``.

    ``item`` holds the module's options (missing keys read as unset). The host identity and
    whether ``host_iface`` exists on the host are the module's business.
    """
    transport = common.check_transport(item.get('transport', 'tcp'), prefix + 'transport')
    conn = {'transport': transport}
    conn['subnqn'] = common.check_nqn(item.get('subnqn'), prefix + 'subnqn')
    conn['traddr'] = common.check_traddr(transport, item.get('traddr'), prefix + 'traddr')
    trsvcid = item.get('trsvcid')
    if transport == 'fc':
        if trsvcid is not None:
            raise common.NvmeInputError('%strsvcid=%r: fc has no service id' % (prefix, trsvcid), option=prefix + 'trsvcid',
                                        value=trsvcid, reason='fc has no service id (leave it unset)')
        conn['trsvcid'] = None
    else:
        conn['trsvcid'] = common.check_svcid(DEFAULT_SVCID if trsvcid is None else trsvcid, prefix + 'trsvcid')
    host_traddr = item.get('host_traddr')
    conn['host_traddr'] = common.check_traddr(transport, host_traddr, prefix + 'host_traddr') if host_traddr else None
    host_iface = item.get('host_iface')
    if host_iface:
        if transport != 'tcp':
            raise common.NvmeInputError('%shost_iface=%r: only tcp binds to an interface' % (prefix, host_iface),
                                        option=prefix + 'host_iface', value=host_iface,
                                        reason='only tcp binds to an interface (transport %s)' % transport)
        common.check_netdev(host_iface, prefix + 'host_iface')
    conn['host_iface'] = host_iface or None
    for key in CONNECTION_LIMITS:
        conn[key] = common.check_range(item.get(key), prefix + key, key)
    secret, ctrl_secret = item.get('dhchap_secret'), item.get('dhchap_ctrl_secret')
    common.check_dhchap_pair(prefix, item.get('auth') or 'none', secret, ctrl_secret, 'dhchap_secret', 'dhchap_ctrl_secret')
    conn['dhchap_secret'] = common.check_dhchap_secret(secret, prefix + 'dhchap_secret') if secret else None
    conn['dhchap_ctrl_secret'] = common.check_dhchap_secret(ctrl_secret, prefix + 'dhchap_ctrl_secret') if ctrl_secret else None
    name = item.get('name')
    conn['name'] = common.check_name(name, prefix + 'name') if name else default_name(conn)
    return conn


def duplicate_connections(conns, variable):
    """Refusals for names and connections given twice; ``conns`` are (index, normalised conn)."""
    errors = []
    names = {}
    keys = {}
    for index, conn in conns:
        if conn['name'] in names:
            errors.append(common.NvmeInputError('%s[%d] and %s[%d] have the same name %r' % (
                variable, names[conn['name']], variable, index, conn['name'])))
        names.setdefault(conn['name'], index)
        key = connection_key(conn)
        if key in keys:
            errors.append(common.NvmeInputError('%s[%d] and %s[%d] are the same connection (%s, %s)' % (
                variable, keys[key], variable, index, describe(conn), conn['subnqn'])))
        keys.setdefault(key, index)
    return errors


# The role's own settings: (variable suffix, LIMITS kind).
_ROLE_LIMITS = (('nr_io_queues', 'nr_io_queues'), ('queue_size', 'queue_size'), ('reconnect_delay', 'reconnect_delay'),
                ('keep_alive_tmo', 'keep_alive_tmo'), ('ctrl_loss_tmo', 'ctrl_loss_tmo'), ('retries', 'retries'),
                ('retry_delay', 'retry_delay'), ('boot_timeout', 'boot_timeout'))
# The role's settings that are whole numbers (its argument spec's int options, without the prefix).
NUMBER_SETTINGS = tuple(key for key, dummy in _ROLE_LIMITS) + ('read_ahead_sectors',)


def initiator_errors(connections, mounts=(), settings=None, prefix='nvmeof_initiator_'):
    """Every refusal of an initiator's input (a list of messages, empty when fine).

    ``connections`` and ``mounts`` are the role's lists; ``settings`` its other variables
    by name without ``prefix`` (``hostnqn``, ``hostid``, ``soft_roce_netdev``,
    ``read_ahead_sectors`` and the limits of ``_ROLE_LIMITS``).
    """
    settings = settings or {}
    refusals = common.Refusals()
    variable = prefix + 'connections'
    conns = []
    present = set()
    for index, item in enumerate(connections or []):
        conn = refusals.check(check_connection, item, '%s[%d].' % (variable, index))
        if conn is not None:
            conns.append((index, conn))
        if (item.get('state') or 'present') == 'present':
            present.add(item.get('subnqn'))
    refusals.extend(exc.entry() for exc in duplicate_connections(conns, variable))
    for key, kind in _ROLE_LIMITS:
        refusals.check(common.check_range, settings.get(key), prefix + key, kind)
    if settings.get('hostnqn') is not None:
        refusals.check(common.check_nqn, settings['hostnqn'], prefix + 'hostnqn')
    if settings.get('hostid') is not None:
        refusals.check(common.check_uuid, settings['hostid'], prefix + 'hostid')
    if settings.get('soft_roce_netdev') is not None:
        refusals.check(common.check_netdev, settings['soft_roce_netdev'], prefix + 'soft_roce_netdev')
    sectors = settings.get('read_ahead_sectors')
    if sectors is not None and (sectors < 0 or sectors % 8):
        refusals.append('%sread_ahead_sectors = %s: must be a non-negative multiple of 8 (one 4 KiB page)' % (
            prefix, json.dumps(sectors)))
    paths = set()
    for index, mount in enumerate(mounts or []):
        where = '%smounts[%d]' % (prefix, index)
        path = mount.get('path')
        if refusals.check(common.check_abspath, path, where + '.path', 'an absolute mount point') is not None:
            if path in paths:
                refusals.append('%s.path = %s: listed twice' % (where, json.dumps(path)))
            paths.add(path)
        if (mount.get('state') or 'mounted') == 'mounted' and mount.get('subnqn') not in present:
            refusals.append('%s.subnqn = %s: no present connection in %s has this subsystem' % (
                where, json.dumps(mount.get('subnqn')), variable))
        refusals.check(common.check_range, mount.get('nsid', 1), where + '.nsid', 'nsid')
        if mount.get('opts'):
            refusals.extend('%s.opts = %s: %s' % (where, json.dumps(mount['opts']), problem)
                            for problem in option_errors(mount['opts'], fstype=mount.get('fstype') or 'xfs'))
    return list(refusals)


def initiator_connections(connections, identity, defaults=None):
    """The role's connections as ``nvme_connect`` takes them: the role's defaults and this host's
    identity (``{hostnqn, hostid}``) filled in, unset values left out."""
    defaults = defaults or {}
    result = []
    for conn in connections or []:
        item = {'subnqn': conn['subnqn'], 'transport': conn.get('transport') or 'tcp', 'traddr': conn['traddr'],
                'state': conn.get('state') or 'present', 'auth': conn.get('auth') or 'none',
                'hostnqn': identity['hostnqn'], 'hostid': identity['hostid']}
        if item['transport'] != 'fc':
            item['trsvcid'] = conn.get('trsvcid') or DEFAULT_SVCID
        for key in CONNECTION_LIMITS:
            value = conn.get(key)
            value = defaults.get(key) if value is None else value
            if value is not None:
                item[key] = value
        for key in ('name', 'host_iface', 'host_traddr', 'dhchap_secret', 'dhchap_ctrl_secret'):
            if conn.get(key):
                item[key] = conn[key]
        result.append(item)
    return result


def identity_duplicates(identities):
    """``{host: {hostnqn, hostid}}`` -> messages for each host NQN or host ID two hosts share."""
    errors = []
    for key, label in (('hostnqn', 'host NQN'), ('hostid', 'host ID')):
        users = {}
        for host in sorted(identities):
            users.setdefault(identities[host][key], []).append(host)
        errors.extend('%s %s is used by %s' % (label, value, ', '.join(hosts))
                      for value, hosts in users.items() if len(hosts) > 1)
    return errors


def mount_plan(mounts, connections, boot_timeout=None):
    """The role's mounts resolved against ``nvme_connect``'s RV(connections): the namespace's block
    device (None when it is not there) and the mount options, which wait for the connections' boot units.

    With ``boot_timeout`` (how long a boot unit keeps trying), the mount also waits that long, twice
    over, for its device: systemd's default of 90 s ends the mount while a target that boots at the
    same time is still coming up, and the unit's own attempts take time on top of its retry delays.
    A connection that fails ends the mount anyway (x-systemd.requires).
    """
    result = []
    for mount in mounts or []:
        nsid = 1 if mount.get('nsid') is None else mount['nsid']
        conns = [c for c in connections or [] if c.get('subnqn') == mount['subnqn'] and c.get('state') == 'present']
        devices = []
        for conn in conns:
            for dev in conn.get('devices') or []:
                if dev.get('nsid') == nsid and dev.get('exists') and dev['device'] not in devices:
                    devices.append(dev['device'])
        units = sorted(set(c['unit'] for c in conns if c.get('unit')))
        readonly = mount.get('readonly')
        opts = ['_netdev', 'nofail'] + (['ro'] if readonly is None or readonly else [])
        opts += ['x-systemd.requires=' + unit for unit in units]
        if units and boot_timeout:
            opts.append('x-systemd.device-timeout=%ds' % (2 * int(boot_timeout)))
        opts += [o.strip() for o in (mount.get('opts') or '').split(',') if o.strip()]
        result.append({'path': mount['path'], 'subnqn': mount['subnqn'], 'nsid': nsid,
                       'fstype': mount.get('fstype') or 'xfs', 'state': mount.get('state') or 'mounted',
                       'device': devices[0] if devices else None,
                       'opts': ','.join(sorted(set(opts), key=opts.index))})
    return result


def mount_filesystems(plan, devices):
    """What the role mounts, from its ``mount_plan`` and what module ``blockdev_info`` read on the namespaces
    (``devices``, matched by path): ``{'errors', 'mounts'}``.

    A namespace that does not hold the declared filesystem (another one, none, or a probe that failed) is an
    error, naming mount point, device, namespace and subsystem: this role never creates filesystems on
    fabric namespaces. The others become ``xfs_mount`` entries whose source is the filesystem UUID, never
    the kernel's device name (nvme1n1 changes between boots). Mounts of namespaces that are not there
    (no device) are left to their fstab entry's nofail, as before.
    """
    by_path = dict((entry.get('path'), entry) for entry in devices or [])
    errors, mounts = [], []
    for mount in plan or []:
        if mount.get('state') != 'mounted' or not mount.get('device'):
            continue
        found = by_path.get(mount['device']) or {'problem': 'not read'}
        where = '%s: %s (namespace %s of %s)' % (mount['path'], mount['device'], mount.get('nsid'), mount.get('subnqn'))
        if found.get('problem'):
            errors.append('%s could not be read: %s' % (where, found['problem']))
        elif found.get('fstype') != mount['fstype']:
            errors.append('%s holds %s, not %s; this role never creates filesystems on fabric namespaces (create it '
                          'on the target)' % (where, json.dumps(found.get('fstype') or 'no filesystem'), mount['fstype']))
        elif not found.get('uuid'):
            errors.append('%s holds %s without a filesystem UUID; fstab names fabric filesystems by UUID (set one '
                          'on the target: xfs_admin -U generate)' % (where, mount['fstype']))
        else:
            mounts.append({'path': mount['path'], 'src': 'UUID=' + found['uuid'], 'opts': mount['opts']})
    return {'errors': errors, 'mounts': mounts}


def host_identity(existing_nqn='', existing_id='', generated_nqn='', hostnqn=None, hostid=None):
    """``{hostnqn, hostid, hostnqn_source}`` of a host: the role's variables first, then the files
    (``/etc/nvme/hostnqn``, ``/etc/nvme/hostid``), then what ``nvme gen-hostnqn`` printed. A host ID
    not given nor on file is the UUID of a ``...:uuid:<uuid>`` NQN, else derived from the NQN."""
    existing_nqn, existing_id, generated_nqn = [(v or '').strip() for v in (existing_nqn, existing_id, generated_nqn)]
    nqn = hostnqn or existing_nqn or generated_nqn
    if hostnqn:
        source = 'nvmeof_initiator_hostnqn'
    elif existing_nqn:
        source = HOSTNQN_FILE
    else:
        source = 'nvme gen-hostnqn'
    ident = hostid or existing_id
    if not ident:
        found = _UUID_NQN_RE.match(nqn)
        ident = found.group('uuid') if found else str(uuid.uuid5(_TO_UUID_NAMESPACE, nqn))
    return {'hostnqn': nqn, 'hostid': ident.lower(), 'hostnqn_source': source}


def identity_errors(identity, identities=None):
    """What is wrong with a host's identity: not an NQN / UUID, or shared with another host
    (``identities``: every host's identity by name); [] when fine."""
    refusals = common.Refusals()
    refusals.check(common.check_nqn, identity.get('hostnqn'), 'host NQN (from %s)' % identity.get('hostnqn_source'))
    refusals.check(common.check_uuid, identity.get('hostid'), 'host ID')
    duplicates = identity_duplicates(identities or {})
    if duplicates:
        refusals.append('Duplicates: %s. Cloned hosts keep the NQN of their image: delete %s and %s on all but one of '
                        'them, or set nvmeof_initiator_hostnqn / nvmeof_initiator_hostid per host' % (
                            '; '.join(duplicates), HOSTNQN_FILE, HOSTID_FILE))
    return list(refusals)
