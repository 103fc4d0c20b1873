#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
---
module: nvmet_subsystem
short_description: Export block devices or files over NVMe-oF with the kernel target (nvmet, configfs)
version_added: 0.1.0
author:
  - inferops.node maintainers (@inferops)
description:
  - Configures the Linux kernel NVMe target through C(/sys/kernel/config/nvmet) - NVM subsystems, their
    namespaces (backed by block devices, or by files for labs), the hosts allowed to connect, and the
    ports (TCP or RDMA listeners) they are exported on - for a list of subsystems and ports in one call.
  - Declarative for what it manages - a listed subsystem gets exactly the listed namespaces, allowed hosts
    and ports; subsystems and ports not listed are left alone. Hosts are refused unless listed in
    O(subsystems[].allowed_hosts); O(subsystems[].allow_any_host) stays off unless asked for.
  - Idempotent - the current configuration is read from configfs and only differences are written. A
    namespace whose device, UUID or NGUID changes is disabled while it is changed; a port whose address
    changes is unlinked from its subsystems while it is changed.
  - With O(persistent=present) the whole nvmet configuration is saved after the change to O(state_file),
    in nvmetcli's JSON format (mode 0600), which the restore unit of the C(inferops.node.nvmeof_target)
    role (C(inferops-nvmet-restore.service)) loads at boot - Debian 12 has no nvmetcli.
  - Every option is validated before anything changes - NQN syntax, addresses, port ranges, namespace
    backing devices (existing block device or file, not mounted here), DH-HMAC-CHAP keys and kernel support,
    and a present subsystem left with no allowed host (refused unless O(subsystems[].allow_no_hosts=true)).
options:
  subsystems:
    description: NVM subsystems to export or remove.
    type: list
    elements: dict
    default: []
    suboptions:
      nqn:
        description: Subsystem NQN, for example C(nqn.2026-09.internal.ai:models-pool-01).
        type: str
        required: true
      state:
        description: V(present) or V(absent) (the subsystem, its namespaces and port links are removed).
        type: str
        choices: [present, absent]
        default: present
      allow_any_host:
        description: Let any host connect. Off by default; O(subsystems[].allowed_hosts) must then be empty.
        type: bool
        default: false
      allow_no_hosts:
        description:
          - Accept an empty O(subsystems[].allowed_hosts) - no host may connect (hosts connected now keep their
            connection until it drops, then are refused).
          - Without it, a present subsystem whose O(subsystems[].allowed_hosts) is empty (and
            O(subsystems[].allow_any_host=false)) is refused before anything changes - also when that removes
            the last allowed host of an existing subsystem.
          - Exclusive with a non-empty O(subsystems[].allowed_hosts) and with O(subsystems[].allow_any_host=true).
        type: bool
        default: false
      allowed_hosts:
        description:
          - The hosts allowed to connect (the complete list).
          - Must not be empty unless O(subsystems[].allow_any_host=true) or O(subsystems[].allow_no_hosts=true).
        type: list
        elements: dict
        default: []
        suboptions:
          nqn:
            description: Host NQN (the initiator's C(/etc/nvme/hostnqn)).
            type: str
            required: true
          auth:
            description:
              - V(dhchap) - the host must authenticate with DH-HMAC-CHAP; O(subsystems[].allowed_hosts[].dhchap_key)
                is then required and the kernel must be built with C(CONFIG_NVME_TARGET_AUTH).
            type: str
            choices: [none, dhchap]
            default: none
          dhchap_key:
            description: The host's secret (C(DHHC-1:<hh>:<base64>:)); never logged.
            type: str
          dhchap_ctrl_key:
            description: Controller secret for bidirectional authentication.
            type: str
          dhchap_hash:
            description: HMAC hash for DH-HMAC-CHAP.
            type: str
            choices: ['hmac(sha256)', 'hmac(sha384)', 'hmac(sha512)']
          dhchap_dhgroup:
            description: Diffie-Hellman group (V(null) for none).
            type: str
            choices: ['null', ffdhe2048, ffdhe3072, ffdhe4096, ffdhe6144, ffdhe8192]
      namespaces:
        description: The namespaces of the subsystem (the complete list).
        type: list
        elements: dict
        default: []
        suboptions:
          nsid:
            description: Namespace ID, 1 or more.
            type: int
            required: true
          path:
            description:
              - Backing block device (a stable path such as C(/dev/disk/by-id/...) is best) or regular file.
              - A block device mounted on this host is refused.
            type: path
            required: true
          size:
            description:
              - For a file-backed namespace (labs) - create the file, sparse, with this size (C(64M), C(2G))
                when it does not exist. Never resizes.
            type: str
          uuid:
            description:
              - Namespace UUID (what initiators see as C(ID_WWN=uuid.<uuid>) and in C(/dev/disk/by-id/nvme-uuid.*)).
              - Default for a new namespace - a UUID derived from the subsystem NQN and the NSID, so a rebuilt
                target keeps its namespace identities. An existing namespace keeps its UUID unless this is set.
            type: str
          nguid:
            description: Namespace globally unique identifier (a UUID-formatted string); default none.
            type: str
          enabled:
            description: Whether the namespace is enabled (visible to hosts).
            type: bool
            default: true
      ports:
        description: IDs of O(ports) (or existing nvmet ports) the subsystem is exported on (the complete list).
        type: list
        elements: int
        default: []
      serial:
        description:
          - Serial number reported to hosts (up to 20 printable ASCII characters). Default for a new
            subsystem - derived from its NQN. The kernel refuses changes once a host has connected.
        type: str
      model:
        description: Model number reported to hosts (up to 40 printable ASCII characters); set it before hosts connect.
        type: str
  ports:
    description: nvmet ports (listeners).
    type: list
    elements: dict
    default: []
    suboptions:
      id:
        description: Port ID, 1-65535.
        type: int
        required: true
      state:
        description: V(present) or V(absent) (the port stops listening; its subsystem links are removed).
        type: str
        choices: [present, absent]
        default: present
      transport:
        description: Transport; required when O(ports[].state=present).
        type: str
        choices: [tcp, rdma, fc]
      traddr:
        description:
          - Address to listen on - an IPv4/IPv6 address of this host for V(tcp) and V(rdma) (for RDMA, of an
            RDMA-capable interface - a RoCE NIC or a soft-RoCE C(rdma_rxe) link); required when present.
        type: str
      trsvcid:
        description: TCP/RDMA port, 1-65535, default V(4420).
        type: int
      inline_data_size:
        description: In-capsule data size in bytes (C(param_inline_data_size)); kernel default when unset.
        type: int
  persistent:
    description:
      - V(present) - save the whole nvmet configuration to O(state_file) after the change.
      - V(ignore) - change the running configuration only (for example to take a port down for a test).
    type: str
    choices: [present, ignore]
    default: present
  state_file:
    description: Where the configuration is saved (nvmetcli JSON format, mode 0600).
    type: path
    default: /etc/nvmet/inferops-nvmet.json
attributes:
  check_mode:
    description: Nothing is written; RV(changes) lists what would be done.
    support: full
  diff_mode:
    description: The nvmet configuration (keys masked) before and after, and O(state_file) (keys masked, and its mode when
      only that changes) when O(persistent=present).
    support: full
  platform:
    description: Linux with the nvmet kernel module and configfs.
    support: full
    platforms: posix
notes:
  - Loads C(nvmet) when its configfs tree is missing. The transport modules (C(nvmet-tcp), C(nvmet-rdma)) are
    loaded by the kernel when a port is enabled; the C(inferops.node.nvmeof_target) role also loads them at boot.
  - Debian 12's kernel (6.1) is built without C(CONFIG_NVME_TARGET_AUTH); DH-HMAC-CHAP hosts are refused there
    before anything changes.
seealso:
  - module: inferops.node.nvme_connect
  - name: nvmetcli
    description: The configuration file format.
    link: https://git.infradead.org/users/hch/nvmetcli.git
'''

EXAMPLES = r'''
- name: Export the model pool drive over TCP and RoCE v2 to two compute nodes
  inferops.node.nvmet_subsystem:
    ports:
      - {id: 1, transport: tcp, traddr: 10.100.1.50, trsvcid: 4420}
      - {id: 2, transport: rdma, traddr: 10.100.1.50, trsvcid: 4420}
    subsystems:
      - nqn: nqn.2026-09.internal.ai:models-pool-01
        namespaces:
          - nsid: 1
            path: /dev/disk/by-id/nvme-SAMSUNG_MZWLO3T8HCLS-00A07_S6EXNA0W000001
        allowed_hosts:
          - nqn: nqn.2014-08.org.nvmexpress:uuid:4c4c4544-0042-3810-8058-b3c04f335a32
          - nqn: nqn.2014-08.org.nvmexpress:uuid:4c4c4544-0042-3810-8058-b3c04f335a33
        ports: [1, 2]

- name: File-backed namespace for a lab
  inferops.node.nvmet_subsystem:
    ports:
      - {id: 1, transport: tcp, traddr: 10.77.0.10}
    subsystems:
      - nqn: nqn.2026-09.internal.ai:lab-scratch
        namespaces:
          - {nsid: 1, path: /srv/nvmet/scratch.img, size: 256M}
        allow_any_host: true
        ports: [1]

- name: Take port 1 down now (not saved)
  inferops.node.nvmet_subsystem:
    ports:
      - {id: 1, state: absent}
    persistent: ignore
'''

RETURN = r'''
subsystems:
  description:
    - The listed subsystems after the call (planned state in check mode).
    - A present subsystem has at least one entry in C(allowed_hosts), or C(allow_any_host=true), unless it was
      given O(subsystems[].allow_no_hosts=true).
  returned: always
  type: list
  elements: dict
  sample:
    - nqn: nqn.2026-09.internal.ai:models-pool-01
      state: present
      allow_any_host: false
      allowed_hosts: [nqn.2014-08.org.nvmexpress:uuid:4c4c4544-0042-3810-8058-b3c04f335a32]
      namespaces:
        - {nsid: 1, path: /dev/nvme0n1, uuid: 2b0b6f3e-5c0c-5a53-9f0d-1f3d2f0f6f10, nguid: null, enabled: true}
      ports: [1, 2]
      serial: 5a3e0f5c2b1d4e6f7a8b
ports:
  description: The listed ports after the call.
  returned: always
  type: list
  elements: dict
  sample:
    - {id: 1, state: present, transport: tcp, adrfam: ipv4, traddr: 10.100.1.50, trsvcid: 4420,
       subsystems: ["nqn.2026-09.internal.ai:models-pool-01"]}
changes:
  description: The configfs operations done (or that would be done), in order; secrets masked.
  returned: always
  type: list
  elements: str
  sample: ["mkdir subsystems/nqn.2026-09.internal.ai:models-pool-01", "write ports/1/addr_trtype = tcp"]
state_file:
  description: Path of the saved configuration.
  returned: always
  type: str
  sample: /etc/nvmet/inferops-nvmet.json
state_file_changed:
  description: Whether the saved configuration was (or would be) rewritten.
  returned: always
  type: bool
command_log:
  description:
    - Every command the module ran, in order, in the C locale, to debug a run (C(-vvv) prints it). In check mode a
      command that would change the host is listed, not run (RV(command_log[].ran) false).
  returned: always
  type: list
  elements: dict
  contains:
    argv:
      description: The argument list, the program resolved to its path.
      type: list
      elements: str
    rc:
      description: The exit status; null for a command check mode did not run.
      type: int
    ran:
      description: Whether the command ran.
      type: bool
  sample: [{argv: [/usr/sbin/modprobe, nvmet], rc: 0, ran: true}]
'''

import copy
import hashlib
import json
import os
import re
import stat
import uuid

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_native

from ansible_collections.inferops.node.plugins.module_utils.common import textfile
from ansible_collections.inferops.node.plugins.module_utils.storage import nvme_common as common
from ansible_collections.inferops.node.plugins.module_utils.fabric import nvme_fabrics as fabrics
from ansible_collections.inferops.node.plugins.module_utils.fabric import nvmet
from ansible_collections.inferops.node.plugins.module_utils.common import sysfs
from ansible_collections.inferops.node.plugins.module_utils.common.command import CommandRunner

MASK = '********'
SECRET_KEYS = ('dhchap_key', 'dhchap_ctrl_key')
_PRINTABLE_RE = re.compile(r'^[\x20-\x7e]+$')


class InputError(common.NvmeInputError):
    pass


def backing_kind(real):
    """'block', 'file' or None for an existing path."""
    mode = os.stat(real).st_mode
    if stat.S_ISBLK(mode):
        return 'block'
    if stat.S_ISREG(mode):
        return 'file'
    return None


def derived_uuid(nqn, nsid):
    return str(uuid.uuid5(uuid.NAMESPACE_URL, 'nvmet:%s:%d' % (nqn, nsid)))


def derived_serial(nqn):
    return hashlib.sha256(nqn.encode('utf-8')).hexdigest()[:20]


# ------------------------------------------------------------------ model

def model_of(state):
    """nvmetcli-style state -> internal model (dicts and sets keyed by name/id)."""
    hosts = dict((h['nqn'], dict((k, v) for k, v in h.items() if k != 'nqn')) for h in state['hosts'])
    subsystems = {}
    for sub in state['subsystems']:
        subsystems[sub['nqn']] = {
            'attr': dict(sub['attr']),
            'allowed_hosts': set(sub['allowed_hosts']),
            'namespaces': dict((ns['nsid'], {'path': ns['device'].get('path'), 'uuid': ns['device'].get('uuid'),
                                             'nguid': ns['device'].get('nguid'), 'enable': int(ns.get('enable', 0))})
                               for ns in sub['namespaces']),
        }
    ports = {}
    for port in state['ports']:
        ports[port['portid']] = {'addr': dict(port['addr']), 'param': dict(port.get('param', {})),
                                 'subsystems': set(port['subsystems']), 'referrals': list(port.get('referrals', []))}
    return {'hosts': hosts, 'subsystems': subsystems, 'ports': ports}


def state_of(model):
    """Internal model -> nvmetcli-style state (sorted, JSON-ready)."""
    hosts = [dict([('nqn', nqn)] + sorted(attrs.items())) for nqn, attrs in sorted(model['hosts'].items())]
    subsystems = []
    for nqn, sub in sorted(model['subsystems'].items()):
        namespaces = []
        for nsid, ns in sorted(sub['namespaces'].items()):
            namespaces.append({'nsid': nsid, 'enable': ns['enable'],
                               'device': {'path': ns['path'], 'uuid': ns['uuid'], 'nguid': ns['nguid']}})
        subsystems.append({'nqn': nqn, 'attr': dict(sorted(sub['attr'].items())),
                           'allowed_hosts': sorted(sub['allowed_hosts']), 'namespaces': namespaces})
    ports = []
    for portid, port in sorted(model['ports'].items()):
        ports.append({'portid': portid, 'addr': dict(sorted(port['addr'].items())), 'param': dict(sorted(port['param'].items())),
                      'referrals': sorted(port['referrals']), 'subsystems': sorted(port['subsystems'])})
    return {'hosts': hosts, 'ports': ports, 'subsystems': subsystems}


def masked(state):
    state = copy.deepcopy(state)
    for host in state['hosts']:
        for key in SECRET_KEYS:
            if host.get(key):
                host[key] = MASK
    return state


def state_json(state):
    return json.dumps(state, indent=2, sort_keys=True) + '\n'


def masked_file(text):
    """A state file's text as the diff shows it, as written (a hand edit shows too), keys masked; '' for none."""
    return re.sub(r'("(?:%s)"\s*:\s*)"[^"]+"' % '|'.join(SECRET_KEYS), r'\1' + json.dumps(MASK), text or '')


# ------------------------------------------------------------------ validation

def validate(module):
    params = module.params
    ports = {}
    for index, item in enumerate(params['ports']):
        prefix = 'ports[%d].' % index
        common.check_range(item['id'], prefix + 'id', 'port_id')
        if item['id'] in ports:
            raise InputError('%sid=%r is listed twice' % (prefix, item['id']))
        port = {'id': item['id'], 'state': item['state'], 'index': index}
        if item['state'] == 'present':
            transport = item['transport']
            if not transport:
                raise InputError('%stransport is required for a present port' % prefix)
            traddr = common.check_traddr(transport, item['traddr'], prefix + 'traddr')
            if transport == 'fc':
                if item['trsvcid'] is not None:
                    raise InputError('%strsvcid=%r: fc has no service id' % (prefix, item['trsvcid']))
                trsvcid = 'none'
            else:
                trsvcid = str(common.check_svcid(4420 if item['trsvcid'] is None else item['trsvcid'], prefix + 'trsvcid'))
            port['addr'] = {'trtype': transport, 'adrfam': common.adrfam_of(transport, traddr), 'traddr': traddr,
                            'trsvcid': trsvcid, 'treq': 'not specified'}
            if item['inline_data_size'] is not None:
                if item['inline_data_size'] < 0:
                    raise InputError('%sinline_data_size=%r is negative' % (prefix, item['inline_data_size']))
                port['param'] = {'inline_data_size': str(item['inline_data_size'])}
        ports[item['id']] = port
    listeners = {}
    for port in ports.values():
        if port['state'] == 'present':
            key = (port['addr']['trtype'], port['addr']['traddr'], port['addr']['trsvcid'])
            if key in listeners:
                raise InputError('ports[%d] and ports[%d] listen on the same %s %s:%s' % (
                    listeners[key], port['index'], key[0], key[1], key[2]))
            listeners[key] = port['index']

    subsystems = []
    seen = set()
    paths = {}
    host_keys = {}
    want_auth = False
    for index, item in enumerate(params['subsystems']):
        prefix = 'subsystems[%d].' % index
        nqn = common.check_nqn(item['nqn'], prefix + 'nqn')
        if nqn in seen:
            raise InputError('%snqn=%r is listed twice' % (prefix, nqn))
        seen.add(nqn)
        sub = {'nqn': nqn, 'state': item['state'], 'index': index}
        subsystems.append(sub)
        if item['state'] == 'absent':
            continue
        sub['allow_any_host'] = item['allow_any_host']
        sub['allow_no_hosts'] = item['allow_no_hosts']
        if item['allow_any_host'] and item['allowed_hosts']:
            raise InputError('%sallow_any_host=true and allowed_hosts are exclusive (the kernel refuses both)' % prefix)
        hosts = {}
        for hindex, host in enumerate(item['allowed_hosts']):
            hprefix = '%sallowed_hosts[%d].' % (prefix, hindex)
            hnqn = common.check_nqn(host['nqn'], hprefix + 'nqn')
            if hnqn in hosts:
                raise InputError('%snqn=%r is listed twice' % (hprefix, hnqn))
            attrs = {}
            common.check_dhchap_pair(hprefix, host['auth'], host['dhchap_key'], host['dhchap_ctrl_key'], 'dhchap_key', 'dhchap_ctrl_key')
            for key in SECRET_KEYS:
                if host[key]:
                    attrs[key] = common.check_dhchap_secret(host[key], hprefix + key)
            for key in ('dhchap_hash', 'dhchap_dhgroup'):
                if host[key]:
                    if not attrs:
                        raise InputError('%s%s needs %sdhchap_key' % (hprefix, key, hprefix))
                    attrs[key] = host[key]
            if attrs:
                want_auth = True
            if hnqn in host_keys and host_keys[hnqn][1] != attrs:
                raise InputError('%s: host %s has other DH-HMAC-CHAP settings in %s (they belong to the host, not the subsystem)' % (
                    hprefix.rstrip('.'), hnqn, host_keys[hnqn][0]))
            host_keys[hnqn] = (hprefix.rstrip('.'), attrs)
            hosts[hnqn] = attrs
        sub['allowed_hosts'] = hosts
        namespaces = {}
        for nindex, ns in enumerate(item['namespaces']):
            nprefix = '%snamespaces[%d].' % (prefix, nindex)
            nsid = ns['nsid']
            common.check_range(nsid, nprefix + 'nsid', 'nsid')
            if nsid in namespaces:
                raise InputError('%snsid=%r is listed twice' % (nprefix, nsid))
            path = ns['path']
            common.check_abspath(path, nprefix + 'path')
            entry = {'path': path, 'enable': 1 if ns['enabled'] else 0, 'create_size': None, 'prefix': nprefix}
            real = sysfs.host_path(path)
            if os.path.exists(real):
                entry['kind'] = backing_kind(real)
                if entry['kind'] is None:
                    raise InputError('%spath=%r is neither a block device nor a regular file' % (nprefix, path))
                if ns['size'] is not None:
                    common.check_size(ns['size'], nprefix + 'size')
            elif ns['size'] is not None:
                entry['kind'] = 'file'
                entry['create_size'] = common.check_size(ns['size'], nprefix + 'size')
                parent = os.path.dirname(real)
                while parent and not os.path.exists(parent):
                    parent = os.path.dirname(parent)
                if not os.path.isdir(parent):
                    raise InputError('%spath=%r: %s is not a directory' % (nprefix, path, parent))
            else:
                raise InputError('%spath=%r does not exist (give size to create a backing file)' % (nprefix, path))
            key = os.path.realpath(real) if os.path.exists(real) else real
            if key in paths:
                raise InputError('%spath=%r is already the backing store of %s' % (nprefix, path, paths[key]))
            paths[key] = nprefix.rstrip('.')
            for attr in ('uuid', 'nguid'):
                entry[attr] = common.check_uuid(ns[attr], nprefix + attr) if ns[attr] else None
            namespaces[nsid] = entry
        sub['namespaces'] = namespaces
        for pid in item['ports']:
            port = ports.get(pid)
            if port is not None and port['state'] == 'absent':
                raise InputError('%sports lists port %d, which ports[%d] removes' % (prefix, pid, port['index']))
            if port is None and not sysfs.isdir('%s/ports/%d' % (nvmet.ROOT, pid)):
                raise InputError('%sports lists port %d, which is neither in ports nor configured on this host' % (prefix, pid))
        sub['ports'] = set(item['ports'])
        for attr, limit in (('serial', 20), ('model', 40)):
            value = item[attr]
            if value is not None and (len(value) > limit or not _PRINTABLE_RE.match(value)):
                raise InputError('%s%s=%r must be 1-%d printable ASCII characters' % (prefix, attr, value, limit))
            sub[attr] = value
        removed = [h for h in sysfs.listdir('%s/subsystems/%s/allowed_hosts' % (nvmet.ROOT, nqn)) if h not in hosts]
        errors = nvmet.allowed_hosts_errors('subsystems', index, nqn, list(hosts), allow_any_host=item['allow_any_host'],
                                            allow_no_hosts=item['allow_no_hosts'], removed=removed)
        if errors:
            raise InputError(errors[0])
    if want_auth and common.kernel_config('CONFIG_NVME_TARGET_AUTH') == 'n':
        raise InputError('DH-HMAC-CHAP host keys were given but the running kernel (%s) is built without '
                         'CONFIG_NVME_TARGET_AUTH: nvmet cannot authenticate hosts' % (
                             sysfs.kernel_release() or '?'))
    return subsystems, ports


def check_block_devices(subsystems, current):
    """A block device to export that is mounted (or held) here is refused."""
    for sub in subsystems:
        if sub['state'] != 'present':
            continue
        existing = current['subsystems'].get(sub['nqn'], {}).get('namespaces', {})
        for nsid, ns in sub['namespaces'].items():
            if ns.get('kind') != 'block':
                continue
            if existing.get(nsid, {}).get('path') == ns['path'] and existing[nsid].get('enable'):
                continue
            kname = os.path.basename(sysfs.realpath(ns['path']))
            busy = fabrics.device_in_use(kname)
            if busy:
                raise InputError('%spath=%r (%s) is in use on this host: %s' % (ns['prefix'], ns['path'], kname, '; '.join(busy)))


# ------------------------------------------------------------------ planning

def plan(subsystems, ports, current):
    """The wanted model: ``current`` with the listed subsystems and ports applied."""
    want = copy.deepcopy(current)
    released_hosts = set()
    for port in ports.values():
        if port['state'] == 'absent':
            want['ports'].pop(port['id'], None)
            continue
        entry = want['ports'].setdefault(port['id'], {'addr': {}, 'param': {}, 'subsystems': set(), 'referrals': []})
        entry['addr'] = dict(port['addr'])
        if port.get('param'):
            entry['param'].update(port['param'])
    for sub in subsystems:
        nqn = sub['nqn']
        old = current['subsystems'].get(nqn)
        if sub['state'] == 'absent':
            if old is not None:
                released_hosts |= old['allowed_hosts']
            want['subsystems'].pop(nqn, None)
            for port in want['ports'].values():
                port['subsystems'].discard(nqn)
            continue
        attr = dict(old['attr']) if old else {}
        attr['allow_any_host'] = '1' if sub['allow_any_host'] else '0'
        if sub['serial'] is not None:
            attr['serial'] = sub['serial']
        elif old is None:
            attr['serial'] = derived_serial(nqn)
        if sub['model'] is not None:
            attr['model'] = sub['model']
        namespaces = {}
        for nsid, ns in sub['namespaces'].items():
            before = old['namespaces'].get(nsid) if old else None
            uid = ns['uuid'] or (before['uuid'] if before and before.get('uuid') else derived_uuid(nqn, nsid))
            nguid = ns['nguid'] if ns['nguid'] else (before['nguid'] if before else None)
            namespaces[nsid] = {'path': ns['path'], 'uuid': uid, 'nguid': nguid, 'enable': ns['enable']}
        if old is not None:
            released_hosts |= old['allowed_hosts'] - set(sub['allowed_hosts'])
        want['subsystems'][nqn] = {'attr': attr, 'allowed_hosts': set(sub['allowed_hosts']), 'namespaces': namespaces}
        for hnqn, attrs in sub['allowed_hosts'].items():
            host = want['hosts'].setdefault(hnqn, {})
            for key in nvmet.HOST_AUTH_ATTRS:
                if key in attrs:
                    host[key] = attrs[key]
                else:
                    host.pop(key, None)
        for pid, port in want['ports'].items():
            if pid in sub['ports']:
                port['subsystems'].add(nqn)
            else:
                port['subsystems'].discard(nqn)
    referenced = set()
    for sub in want['subsystems'].values():
        referenced |= sub['allowed_hosts']
    for hnqn in released_hosts - referenced:
        want['hosts'].pop(hnqn, None)
    return want


def apply(cfs, current, want, creates=None):
    """Write the difference between the ``current`` and ``want`` models through ``cfs``."""
    creates = creates or {}
    # 1. hosts
    for hnqn, attrs in sorted(want['hosts'].items()):
        old = current['hosts'].get(hnqn)
        if old is None:
            cfs.mkdir('hosts/%s' % hnqn)
            old = {}
        for key in nvmet.HOST_AUTH_ATTRS:
            if key in attrs and attrs[key] != old.get(key):
                cfs.write('hosts/%s/%s' % (hnqn, key), attrs[key], secret=key in SECRET_KEYS)
    # 2. subsystems, their hosts and namespaces
    for nqn, sub in sorted(want['subsystems'].items()):
        base = 'subsystems/%s' % nqn
        old = current['subsystems'].get(nqn)
        if old is None:
            cfs.mkdir(base)
            old = {'attr': {}, 'allowed_hosts': set(), 'namespaces': {}}
        for hnqn in sorted(old['allowed_hosts'] - sub['allowed_hosts']):
            cfs.unlink('%s/allowed_hosts/%s' % (base, hnqn))
        for key in ('serial', 'model', 'allow_any_host'):
            if key in sub['attr'] and sub['attr'][key] != old['attr'].get(key):
                cfs.write('%s/attr_%s' % (base, key), sub['attr'][key])
        for hnqn in sorted(sub['allowed_hosts'] - old['allowed_hosts']):
            cfs.link('hosts/%s' % hnqn, '%s/allowed_hosts/%s' % (base, hnqn))
        for nsid in sorted(set(old['namespaces']) - set(sub['namespaces'])):
            if old['namespaces'][nsid]['enable']:
                cfs.write('%s/namespaces/%d/enable' % (base, nsid), 0)
            cfs.rmdir('%s/namespaces/%d' % (base, nsid))
        for nsid, ns in sorted(sub['namespaces'].items()):
            nsbase = '%s/namespaces/%d' % (base, nsid)
            before = old['namespaces'].get(nsid)
            if before is None:
                size = creates.get((nqn, nsid))
                if size is not None:
                    cfs.log.append('create file %s (%d bytes, sparse)' % (ns['path'], size))
                    if not cfs.dry:
                        create_file(ns['path'], size)
                cfs.mkdir(nsbase)
                before = {'path': None, 'uuid': None, 'nguid': None, 'enable': 0}
            nvmet.write_namespace(cfs, nsbase, ns, before)
    # 3. ports: removed ones, new ones, changed addresses
    relink = {}
    for pid, port in sorted(current['ports'].items()):
        if pid not in want['ports']:
            for nqn in sorted(port['subsystems']):
                cfs.unlink('ports/%d/subsystems/%s' % (pid, nqn))
            for ref in port['referrals']:
                cfs.rmdir('ports/%d/referrals/%s' % (pid, ref))
            cfs.rmdir('ports/%d' % pid)
    for pid, port in sorted(want['ports'].items()):
        old = current['ports'].get(pid)
        linked = set(old['subsystems']) if old else set()
        if old is None:
            cfs.mkdir('ports/%d' % pid)
            old_addr, old_param = {}, {}
        else:
            old_addr, old_param = old['addr'], old['param']
        relink[pid] = nvmet.write_port(cfs, pid, port['addr'], port['param'], old_addr, old_param, linked)
    # 4. port links
    for pid, port in sorted(want['ports'].items()):
        for nqn in sorted(relink[pid] - port['subsystems']):
            cfs.unlink('ports/%d/subsystems/%s' % (pid, nqn))
        for nqn in sorted(port['subsystems'] - relink[pid]):
            cfs.link('subsystems/%s' % nqn, 'ports/%d/subsystems/%s' % (pid, nqn))
    # 5. removed subsystems, then hosts nobody references any more
    for nqn, sub in sorted(current['subsystems'].items()):
        if nqn in want['subsystems']:
            continue
        base = 'subsystems/%s' % nqn
        for hnqn in sorted(sub['allowed_hosts']):
            cfs.unlink('%s/allowed_hosts/%s' % (base, hnqn))
        for nsid, ns in sorted(sub['namespaces'].items()):
            if ns['enable']:
                cfs.write('%s/namespaces/%d/enable' % (base, nsid), 0)
            cfs.rmdir('%s/namespaces/%d' % (base, nsid))
        cfs.rmdir(base)
    for hnqn in sorted(set(current['hosts']) - set(want['hosts'])):
        cfs.rmdir('hosts/%s' % hnqn)


def create_file(path, size):
    real = sysfs.host_path(path)
    if not os.path.isdir(os.path.dirname(real)):
        os.makedirs(os.path.dirname(real), 0o700)
    fd = os.open(real, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.ftruncate(fd, size)
    finally:
        os.close(fd)


def ensure_nvmet(runner, result):
    if nvmet.available():
        return
    rc, out, err = runner.run(['modprobe', 'nvmet'], changes=True)
    if rc != 0 or not nvmet.available():
        runner.module.fail_json(msg='nvmet is not available: modprobe nvmet: %s; is configfs mounted on /sys/kernel/config?' % (
            (err or out).strip() or 'exit status %d' % rc), **result)


def report(subsystems, ports, model):
    subs = []
    for sub in subsystems:
        entry = model['subsystems'].get(sub['nqn'])
        if entry is None:
            subs.append({'nqn': sub['nqn'], 'state': 'absent'})
            continue
        subs.append({
            'nqn': sub['nqn'], 'state': 'present',
            'allow_any_host': entry['attr'].get('allow_any_host') == '1',
            'allowed_hosts': sorted(entry['allowed_hosts']),
            'namespaces': [{'nsid': nsid, 'path': ns['path'], 'uuid': ns['uuid'], 'nguid': ns['nguid'], 'enabled': bool(ns['enable'])}
                           for nsid, ns in sorted(entry['namespaces'].items())],
            'ports': sorted(pid for pid, port in model['ports'].items() if sub['nqn'] in port['subsystems']),
            'serial': entry['attr'].get('serial'),
            'model': entry['attr'].get('model'),
        })
    result_ports = []
    for pid in sorted(ports):
        port = model['ports'].get(pid)
        if port is None:
            result_ports.append({'id': pid, 'state': 'absent'})
            continue
        addr = port['addr']
        result_ports.append({'id': pid, 'state': 'present', 'transport': addr.get('trtype'), 'adrfam': addr.get('adrfam'),
                             'traddr': addr.get('traddr'),
                             'trsvcid': int(addr['trsvcid']) if (addr.get('trsvcid') or '').isdigit() else None,
                             'subsystems': sorted(port['subsystems'])})
    return subs, result_ports


def main():
    host_options = dict(
        nqn=dict(type='str', required=True),
        auth=dict(type='str', default='none', choices=['none', 'dhchap']),
        dhchap_key=dict(type='str', no_log=True),
        dhchap_ctrl_key=dict(type='str', no_log=True),
        dhchap_hash=dict(type='str', choices=['hmac(sha256)', 'hmac(sha384)', 'hmac(sha512)']),
        dhchap_dhgroup=dict(type='str', choices=['null', 'ffdhe2048', 'ffdhe3072', 'ffdhe4096', 'ffdhe6144', 'ffdhe8192']),
    )
    ns_options = dict(
        nsid=dict(type='int', required=True),
        path=dict(type='path', required=True),
        size=dict(type='str'),
        uuid=dict(type='str'),
        nguid=dict(type='str'),
        enabled=dict(type='bool', default=True),
    )
    module = AnsibleModule(
        argument_spec=dict(
            subsystems=dict(type='list', elements='dict', default=[], options=dict(
                nqn=dict(type='str', required=True),
                state=dict(type='str', default='present', choices=['present', 'absent']),
                allow_any_host=dict(type='bool', default=False),
                allow_no_hosts=dict(type='bool', default=False),
                allowed_hosts=dict(type='list', elements='dict', default=[], options=host_options),
                namespaces=dict(type='list', elements='dict', default=[], options=ns_options),
                ports=dict(type='list', elements='int', default=[]),
                serial=dict(type='str'),
                model=dict(type='str'),
            )),
            ports=dict(type='list', elements='dict', default=[], options=dict(
                id=dict(type='int', required=True),
                state=dict(type='str', default='present', choices=['present', 'absent']),
                transport=dict(type='str', choices=['tcp', 'rdma', 'fc']),
                traddr=dict(type='str'),
                trsvcid=dict(type='int'),
                inline_data_size=dict(type='int'),
            ), required_if=[('state', 'present', ('transport', 'traddr'))]),
            persistent=dict(type='str', default='present', choices=['present', 'ignore']),
            state_file=dict(type='path', default='/etc/nvmet/inferops-nvmet.json'),
        ),
        supports_check_mode=True,
    )
    runner = CommandRunner(module)
    params = module.params
    result = dict(changed=False, subsystems=[], ports=[], changes=[], state_file=params['state_file'], state_file_changed=False,
                  command_log=runner.log)

    try:
        subsystems, ports = validate(module)
        current = model_of(nvmet.read_state())
        check_block_devices(subsystems, current)
    except common.NvmeInputError as exc:
        module.fail_json(msg=to_native(exc), **result)

    want = plan(subsystems, ports, current)
    creates = {}
    for sub in subsystems:
        for nsid, ns in sub.get('namespaces', {}).items():
            if ns.get('create_size') is not None:
                creates[(sub['nqn'], nsid)] = ns['create_size']

    if not module.check_mode and not nvmet.available():
        ensure_nvmet(runner, result)
        current = model_of(nvmet.read_state())
        want = plan(subsystems, ports, current)
    cfs = nvmet.Configfs(dry=module.check_mode)
    try:
        apply(cfs, current, want, creates)
    except (nvmet.NvmetError, OSError) as exc:
        result['changes'] = cfs.log
        module.fail_json(msg='nvmet configuration failed (after %d change(s)): %s' % (len(cfs.log), to_native(exc)), **result)
    result['changes'] = cfs.log

    after = want if module.check_mode else model_of(nvmet.read_state())
    before_state, after_state = state_of(current), state_of(after)
    diff = [dict(before_header='nvmet configuration', after_header='nvmet configuration',
                 before=state_json(masked(before_state)), after=state_json(masked(after_state)))]
    if params['persistent'] == 'present':
        content = state_json(after_state)
        old = textfile.read_text(sysfs.host_path(params['state_file']))
        # The state file on its own: it changes without the configuration (missing, stale, its mode).
        diff.append(dict(before_header=params['state_file'], after_header=params['state_file'],
                         before=masked_file(old), after=masked_file(content)))
        if old != content:
            result['state_file_changed'] = True
            if not module.check_mode:
                textfile.write_text_atomic(module, sysfs.host_path(params['state_file']), content,
                                           prefix='.inferops-nvmet.', mode=0o600, dir_mode=0o700, force_mode=True)
        else:
            mode = stat.S_IMODE(os.stat(sysfs.host_path(params['state_file'])).st_mode)
            if mode != 0o600:
                result['state_file_changed'] = True
                # As ansible.builtin.file shows a mode change.
                diff.append(dict(before=dict(path=params['state_file'], mode='%04o' % mode),
                                 after=dict(path=params['state_file'], mode='0600')))
                if not module.check_mode:
                    os.chmod(sysfs.host_path(params['state_file']), 0o600)
    result['subsystems'], result['ports'] = report(subsystems, ports, after)
    result['changed'] = bool(cfs.log) or result['state_file_changed']
    if module._diff:
        result['diff'] = diff
    module.exit_json(**result)


if __name__ == '__main__':
    main()
