#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
---
module: nvme_connect
short_description: Discover, connect and disconnect NVMe over Fabrics subsystems, persistently
version_added: 0.1.0
author:
  - inferops.node maintainers (@inferops)
description:
  - Connects this host to NVMe over Fabrics subsystems (TCP, RDMA/RoCE v2, FC) with nvme-cli, or
    disconnects them, for a list of connections in one call, and returns each subsystem's
    controllers and namespace block devices (C(/dev/nvmeXnY)) with their state.
  - Whether a connection exists is read from sysfs - C(/sys/class/nvme/nvme*/{transport,address,subsysnqn,state,hostnqn})
    and C(/sys/class/nvme-subsystem) - never from nvme-cli's messages. A controller that is
    C(connecting) or C(resetting) (the kernel is reconnecting by itself) is not connected again, but it
    gets O(retries) x O(retry_delay) seconds to become C(live); after that the run fails, naming the
    address (the target is unreachable).
  - Before connecting, the target's discovery controller is asked for its discovery log
    (C(nvme discover -o json)), with O(retries) attempts; the run fails with the address when the
    target cannot be reached, and with the host NQN when the subsystem is not offered to this host
    (nvmet lists only the subsystems a host is allowed to use).
  - On a live connection, O(connections[].ctrl_loss_tmo) and O(connections[].reconnect_delay) are
    changed in place through sysfs; a different queue count, queue size, keep-alive timeout or host
    ID needs a new connection and is only reported (RV(connections[].mismatches)) unless
    O(reconnect_on_change=true).
  - The last path to a namespace that is mounted, used as swap or held by another device is never
    disconnected unless O(force=true).
  - With O(persistent=present), each connection is recorded so it comes back at boot, in one systemd
    unit per connection (C(inferops-nvmf-connect@<name>.service), ordered after
    C(network-online.target) and before C(remote-fs-pre.target)). The unit template and its helper
    are files of the C(inferops.node.nvmeof_initiator) role (install them first when using this module
    on its own); this module writes each connection's settings file and enables and starts its instance. The unit retries for
    O(boot_timeout) seconds and fails on its own when its connection cannot be made, so every
    connection's failure shows in C(systemctl) and the journal. nvme-cli's own C(nvmf-autoconnect.service)
    (C(nvme connect-all) over C(/etc/nvme/discovery.conf) or C(config.json)) is not used - nvme-cli
    2.x exits 0 when a connection fails (nvme-cli issue 2800), so a failed boot-time connection is
    reported as success and never retried.
  - Every option is validated (NQN syntax, addresses, ports, secrets, kernel support) before anything
    changes.
options:
  connections:
    description:
      - The connections to manage, in order. Connections are made before any is removed, so a path
        can be replaced by another one (for example TCP by RDMA) without losing the namespace.
    type: list
    elements: dict
    default: []
    suboptions:
      name:
        description:
          - Name of the connection, used for its boot unit (C(inferops-nvmf-connect@<name>.service)) and
            its settings file (C(/etc/nvme/inferops/<name>.conf)). Letters, digits, C(.), C(_), C(-).
          - Default C(<last part of subnqn>-<transport>-<traddr>-<trsvcid>[-<host_iface>]).
        type: str
      state:
        description:
          - V(present) connects, V(absent) disconnects every controller of this connection.
        type: str
        choices: [present, absent]
        default: present
      transport:
        description: Fabric transport.
        type: str
        required: true
        choices: [tcp, rdma, fc]
      traddr:
        description:
          - Target address - an IPv4 or IPv6 address for V(tcp) and V(rdma) (validated with netaddr when
            it is installed on the host, else with Python's ipaddress), C(nn-0x<WWNN>:pn-0x<WWPN>) for V(fc).
        type: str
        required: true
      trsvcid:
        description:
          - Transport service id (TCP/RDMA port), 1-65535. Default V(4420) for V(tcp) and V(rdma);
            not used by V(fc).
        type: int
      subnqn:
        description: NQN of the NVM subsystem, for example C(nqn.2026-09.internal.ai:models-pool-01).
        type: str
        required: true
      host_traddr:
        description: Source address of the connection on this host (an IP, or C(nn-0x..:pn-0x..) for FC).
        type: str
      host_iface:
        description: Network interface the TCP connection must use (C(tcp) only).
        type: str
      hostnqn:
        description: Host NQN to present. Default - the content of C(/etc/nvme/hostnqn).
        type: str
      hostid:
        description:
          - Host ID (a UUID). Default - the content of C(/etc/nvme/hostid) (not with O(connections[].hostnqn)),
            else the UUID of a C(nqn.2014-08.org.nvmexpress:uuid:<uuid>) host NQN, else a UUID derived from the
            host NQN (the one the inferops.node.nvmeof_initiator role writes to C(/etc/nvme/hostid)).
        type: str
      nr_io_queues:
        description:
          - Number of I/O queues to ask for. The kernel uses at most one per online CPU and the
            target may grant fewer. Default - one per online CPU.
        type: int
      queue_size:
        description: I/O queue depth, 16-1024. The kernel default is 128.
        type: int
      ctrl_loss_tmo:
        description:
          - Seconds the kernel keeps reconnecting a lost controller before removing it; V(-1) means
            forever. The kernel rounds it up to a multiple of O(connections[].reconnect_delay).
            Kernel default 600.
        type: int
      reconnect_delay:
        description: Seconds between reconnect attempts (kernel default 10).
        type: int
      keep_alive_tmo:
        description: Keep-alive timeout in seconds (kernel default 5).
        type: int
      auth:
        description:
          - V(dhchap) - authenticate with NVMe in-band authentication (DH-HMAC-CHAP, NVMe TP 8006);
            O(connections[].dhchap_secret) is then required, and the kernel must be built with
            C(CONFIG_NVME_AUTH).
          - V(none) - no authentication unless O(connections[].dhchap_secret) is given.
        type: str
        choices: [none, dhchap]
        default: none
      dhchap_secret:
        description:
          - Host secret, C(DHHC-1:<hh>:<base64>:) as printed by C(nvme gen-dhchap-key); the CRC is
            checked. Never logged; the boot settings file holding it is mode 0600.
        type: str
      dhchap_ctrl_secret:
        description: Controller secret for bidirectional authentication, same format.
        type: str
  discover:
    description:
      - Discovery controllers to query; their discovery log entries are returned in RV(discovery).
        Nothing is connected. Runs in check mode too.
    type: list
    elements: dict
    default: []
    suboptions:
      transport:
        description: Fabric transport.
        type: str
        required: true
        choices: [tcp, rdma, fc]
      traddr:
        description: Discovery controller address.
        type: str
        required: true
      trsvcid:
        description: Discovery service id, default V(4420) for tcp and rdma (nvmet serves discovery on every port).
        type: int
      host_traddr:
        description: Source address on this host.
        type: str
      host_iface:
        description: Network interface (tcp only).
        type: str
      hostnqn:
        description: Host NQN, default C(/etc/nvme/hostnqn). The target lists only the subsystems this host may use.
        type: str
      hostid:
        description: Host ID, default C(/etc/nvme/hostid).
        type: str
  persistent:
    description:
      - V(present) - record every O(connections[]) with O(connections[].state=present) in a boot unit,
        and remove the records of those with O(connections[].state=absent).
      - V(absent) - remove the boot records of every listed connection (their runtime state still
        follows O(connections[].state)).
      - V(ignore) - runtime only; boot records are not touched.
    type: str
    choices: [present, absent, ignore]
    default: ignore
  retries:
    description: Attempts to reach a target (discovery, then connect) before failing.
    type: int
    default: 3
  retry_delay:
    description: Seconds between two attempts.
    type: int
    default: 5
  connect_timeout:
    description: Seconds to wait, after a connect, for the controller to be C(live) and its namespaces to appear.
    type: int
    default: 30
  boot_timeout:
    description:
      - How long, in seconds, a boot unit keeps trying its connection before it fails (the target
        may boot at the same time as this host).
    type: int
    default: 600
  boot_retry_delay:
    description: Seconds between two attempts of a boot unit.
    type: int
    default: 5
  reconnect_on_change:
    description:
      - Disconnect and reconnect a live connection whose queue count, queue size, keep-alive timeout
        or host ID differ from the wanted ones. Refused for the last path of a namespace in use unless
        O(force=true).
    type: bool
    default: false
  force:
    description: Allow disconnecting the last path to a namespace that is mounted, swap, or held.
    type: bool
    default: false
attributes:
  check_mode:
    description: Nothing is connected, disconnected or written; RV(connections[].action) tells what would be done.
    support: full
  diff_mode:
    description: Shows the connections, the settings changed in place (O(connections[].ctrl_loss_tmo),
      O(connections[].reconnect_delay), the host secret, masked) and the boot records (secrets masked) before and after.
    support: full
  platform:
    description: Linux with nvme-cli 2.x, sysfs and, for O(persistent=present), systemd.
    support: full
    platforms: posix
requirements:
  - nvme-cli >= 2.0 on the managed host
  - netaddr on the managed host (optional; Python's ipaddress is used without it)
notes:
  - The kernel modules of the transports (C(nvme-tcp), C(nvme-rdma), C(nvme-fc)) are loaded when missing;
    loading them at boot is the job of the C(inferops.node.nvmeof_initiator) role.
  - Boot records are one C(/etc/nvme/inferops/<name>.conf) per connection (mode 0600, it may hold a secret),
    read by the role's C(/usr/local/sbin/inferops-nvmf-connect) through
    C(/etc/systemd/system/inferops-nvmf-connect@.service); O(persistent=present) fails when the unit
    template is missing (a warning in check mode).
    Mount a filesystem of a fabric namespace with C(_netdev,nofail,x-systemd.requires=<unit>) so it
    waits for its connection.
seealso:
  - name: nvme-connect(1)
    description: nvme-cli connect options.
    link: https://github.com/linux-nvme/nvme-cli/blob/master/Documentation/nvme-connect.txt
  - name: nvme-cli issue 2800
    description: nvme connect-all exits with status 0 despite failed connections.
    link: https://github.com/linux-nvme/nvme-cli/issues/2800
  - module: inferops.node.nvmet_subsystem
'''

EXAMPLES = r'''
- name: Connect the model pool over RoCE v2, persistently
  inferops.node.nvme_connect:
    connections:
      - transport: rdma
        traddr: 10.100.1.50
        trsvcid: 4420
        subnqn: nqn.2026-09.internal.ai:models-pool-01
        queue_size: 128
        nr_io_queues: 8
        ctrl_loss_tmo: 600
        reconnect_delay: 5
    persistent: present
  register: fabric

- name: The namespace block devices
  ansible.builtin.debug:
    msg: "{{ fabric.connections[0].devices | map(attribute='device') | list }}"

- name: Replace the TCP path by an RDMA path of the same subsystem
  inferops.node.nvme_connect:
    connections:
      - {transport: rdma, traddr: 10.100.1.50, subnqn: "nqn.2026-09.internal.ai:models-pool-01"}
      - {transport: tcp, traddr: 10.100.1.50, subnqn: "nqn.2026-09.internal.ai:models-pool-01", state: absent}
    persistent: present

- name: What does the target offer this host?
  inferops.node.nvme_connect:
    discover:
      - {transport: tcp, traddr: 10.100.1.50}
  register: offered

- name: Authenticated connection (kernel with CONFIG_NVME_AUTH)
  inferops.node.nvme_connect:
    connections:
      - transport: tcp
        traddr: 10.100.1.50
        subnqn: nqn.2026-09.internal.ai:models-pool-01
        auth: dhchap
        dhchap_secret: "{{ vault_pool_dhchap_secret }}"
'''

RETURN = r'''
connections:
  description: One entry per requested connection, in request order.
  returned: always
  type: list
  elements: dict
  contains:
    name:
      description: Connection name (boot unit instance).
      type: str
      sample: models-pool-01-tcp-10.100.1.50-4420
    state:
      description: The requested state.
      type: str
      sample: present
    action:
      description:
        - V(connected), V(reconnected), V(updated) (ctrl_loss_tmo/reconnect_delay/secret changed in place),
          V(unchanged), V(disconnected), V(absent) (nothing to disconnect).
        - In check mode the same words, for what would be done.
      type: str
      sample: connected
    transport:
      description: Transport.
      type: str
      sample: tcp
    traddr:
      description: Normalised target address.
      type: str
      sample: 10.100.1.50
    trsvcid:
      description: Service id (null for fc).
      type: int
      sample: 4420
    subnqn:
      description: Subsystem NQN.
      type: str
      sample: nqn.2026-09.internal.ai:models-pool-01
    hostnqn:
      description: Host NQN used.
      type: str
      sample: nqn.2014-08.org.nvmexpress:uuid:06be1b90-3762-4ec8-bc8d-88dd51579e3b
    hostid:
      description: Host ID used.
      type: str
      sample: 06be1b90-3762-4ec8-bc8d-88dd51579e3b
    controllers:
      description: This connection's controllers after the call.
      type: list
      elements: dict
      sample:
        - name: nvme0
          state: live
          transport: tcp
          address: traddr=10.100.1.50,trsvcid=4420,src_addr=10.100.1.21
          io_queues: 8
          queue_size: 128
          ctrl_loss_tmo: 600
          reconnect_delay: 5
          keep_alive_tmo: 5
          subsystem: nvme-subsys0
    subsystem:
      description: The NVMe subsystem (all its controllers, any transport) after the call; null when not connected.
      type: dict
      sample:
        name: nvme-subsys0
        nqn: nqn.2026-09.internal.ai:models-pool-01
        controllers:
          - {name: nvme0, state: live, transport: tcp}
    devices:
      description: The subsystem's namespace block devices.
      type: list
      elements: dict
      sample:
        - {device: /dev/nvme0n1, name: nvme0n1, nsid: 1, size_bytes: 2147483648,
           wwid: uuid.49b1b854-d633-4cd0-9e40-25d5cd39b982, read_ahead_kb: 4096, exists: true}
    mismatches:
      description: Settings of a live connection that differ from the wanted ones and were not changed.
      type: list
      elements: str
      sample: ["queue_size: live 128, wanted 256 (needs a reconnect: reconnect_on_change=true)"]
    unit:
      description: The boot unit of this connection (null unless O(persistent=present)).
      type: str
      sample: inferops-nvmf-connect@models-pool-01-tcp-10.100.1.50-4420.service
    discovery:
      description: Discovery log records seen before connecting (only when a connect was attempted).
      type: list
      elements: dict
discovery:
  description: One entry per O(discover) item, with its discovery log records.
  returned: always
  type: list
  elements: dict
  contains:
    transport:
      description: Transport.
      type: str
    traddr:
      description: Discovery controller address.
      type: str
    trsvcid:
      description: Service id.
      type: int
    records:
      description: Discovery log entries (trtype, adrfam, subtype, treq, portid, trsvcid, subnqn, traddr, sectype).
      type: list
      elements: dict
      sample:
        - {trtype: tcp, adrfam: ipv4, subtype: nvme subsystem, portid: 1, trsvcid: "4420",
           subnqn: "nqn.2026-09.internal.ai:models-pool-01", traddr: 10.100.1.50, sectype: none}
units:
  description: Boot units of this call and their state after it (name, enabled, active).
  returned: always
  type: list
  elements: dict
files_changed:
  description: Per-connection settings files written or removed (or that would be, in check mode).
  returned: always
  type: list
  elements: str
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
  sample: [{argv: [/usr/sbin/nvme, disconnect, "--device=nvme0"], rc: 0, ran: true}]
'''

import json
import os
import re
import shlex
import time

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_native

from ansible_collections.inferops.node.plugins.module_utils.common import textfile
from ansible_collections.inferops.node.plugins.module_utils.storage import nvme_common as common
from ansible_collections.inferops.node.plugins.module_utils.fabric import nvme_fabrics as fabrics
from ansible_collections.inferops.node.plugins.module_utils.common import sysfs
from ansible_collections.inferops.node.plugins.module_utils.common.command import CommandRunner

HOSTNQN_FILE = fabrics.HOSTNQN_FILE
HOSTID_FILE = fabrics.HOSTID_FILE
UNIT_DIR = '/etc/systemd/system'
UNIT_TEMPLATE = 'inferops-nvmf-connect@.service'
HELPER = '/usr/local/sbin/inferops-nvmf-connect'
CONF_DIR = '/etc/nvme/inferops'
MASK = '********'

# The boot unit template and its helper are files of the inferops.node.nvmeof_initiator role;
# this module writes only what is per connection (its settings file, which may hold a secret)
# and enables the unit's instance.
UNIT_PATH = '%s/%s' % (UNIT_DIR, UNIT_TEMPLATE)


class ConnectError(Exception):
    pass


# ------------------------------------------------------------------ helpers

def remove_file(path):
    real = sysfs.host_path(path)
    if os.path.lexists(real):
        os.unlink(real)


def unit_name(name):
    return 'inferops-nvmf-connect@%s.service' % name


describe = fabrics.describe


# ------------------------------------------------------------------ validation

class Validator(object):
    def __init__(self, module):
        self.module = module
        self._hostnqn = None
        self._hostid = None

    def host_defaults(self):
        if self._hostnqn is None:
            self._hostnqn = (textfile.read_text(sysfs.host_path(HOSTNQN_FILE)) or '').strip()
            self._hostid = (textfile.read_text(sysfs.host_path(HOSTID_FILE)) or '').strip()
        return self._hostnqn, self._hostid

    def host(self, item, prefix):
        hostnqn = item.get('hostnqn')
        if hostnqn:
            hostnqn = common.check_nqn(hostnqn, prefix + 'hostnqn')
        else:
            default, dummy = self.host_defaults()
            if not default:
                raise common.NvmeInputError(
                    '%shostnqn is not set and %s does not exist: give hostnqn or create the file '
                    '(the inferops.node.nvmeof_initiator role generates it)' % (prefix, HOSTNQN_FILE))
            hostnqn = common.check_nqn(default, HOSTNQN_FILE)
        hostid = item.get('hostid')
        if hostid:
            hostid = common.check_uuid(hostid, prefix + 'hostid')
        dummy, on_file = self.host_defaults()
        # /etc/nvme/hostid belongs to /etc/nvme/hostnqn: a connection's own host NQN gets its own ID
        # (the kernel refuses one host ID under two host NQNs).
        on_file = '' if item.get('hostnqn') else on_file
        if on_file and not hostid:
            common.check_uuid(on_file, HOSTID_FILE)
        # One rule with the nvmeof_initiator role: given, else on file, else the NQN's UUID or one derived from it.
        hostid = fabrics.host_identity(existing_id=on_file, hostnqn=hostnqn, hostid=hostid)['hostid']
        return hostnqn, hostid

    def portal(self, item, prefix):
        """A discovery controller's address (the fields a connection has besides its subsystem)."""
        transport = common.check_transport(item['transport'], prefix + 'transport')
        traddr = common.check_traddr(transport, item.get('traddr'), prefix + 'traddr')
        trsvcid = item.get('trsvcid')
        if transport == 'fc' and trsvcid is not None:
            raise common.NvmeInputError('%strsvcid=%r: fc has no service id' % (prefix, trsvcid))
        if transport != 'fc':
            trsvcid = common.check_svcid(fabrics.DEFAULT_SVCID if trsvcid is None else trsvcid, prefix + 'trsvcid')
        host_traddr = item.get('host_traddr')
        if host_traddr:
            host_traddr = common.check_traddr(transport, host_traddr, prefix + 'host_traddr')
        host_iface = item.get('host_iface')
        if host_iface:
            if transport != 'tcp':
                raise common.NvmeInputError('%shost_iface=%r: only tcp binds to an interface' % (prefix, host_iface))
            common.check_netdev(host_iface, prefix + 'host_iface')
        portal = dict(transport=transport, traddr=traddr, trsvcid=trsvcid, host_traddr=host_traddr or None,
                      host_iface=host_iface or None)
        return self.on_host(portal, item, prefix)

    def on_host(self, conn, item, prefix):
        """What only the host can tell: the interface exists, the host NQN and ID."""
        if conn.get('host_iface') and not sysfs.exists('/sys/class/net/%s' % conn['host_iface']):
            raise common.NvmeInputError('%shost_iface=%r: no such network interface on this host' % (prefix, conn['host_iface']))
        conn['hostnqn'], conn['hostid'] = self.host(item, prefix)
        return conn

    def connection(self, item, index):
        prefix = 'connections[%d].' % index
        conn = self.on_host(fabrics.check_connection(item, prefix), item, prefix)
        conn['state'] = item['state']
        conn['index'] = index
        return conn


def validate(module):
    params = module.params
    validator = Validator(module)
    for key, low in (('retries', 1), ('retry_delay', 0), ('connect_timeout', 1), ('boot_timeout', 1), ('boot_retry_delay', 1)):
        if params[key] < low:
            raise common.NvmeInputError('%s=%r must be >= %d' % (key, params[key], low))
    conns = [validator.connection(item, index) for index, item in enumerate(params['connections'])]
    for refusal in fabrics.duplicate_connections([(c['index'], c) for c in conns], 'connections'):
        raise refusal
    portals = []
    for index, item in enumerate(params['discover']):
        portals.append(validator.portal(item, 'discover[%d].' % index))
    if any(c['dhchap_secret'] and c['state'] == 'present' for c in conns):
        auth = common.kernel_config('CONFIG_NVME_AUTH')
        if auth == 'n':
            raise common.NvmeInputError(
                'DH-HMAC-CHAP was asked for (%s) but the running kernel (%s) is built without CONFIG_NVME_AUTH: '
                'the secret would be ignored and the connection made without authentication' % (
                    ', '.join('connections[%d]' % c['index'] for c in conns if c['dhchap_secret']),
                    sysfs.kernel_release() or '?'))
    return conns, portals


# ------------------------------------------------------------------ commands

class Nvme(object):
    """nvme-cli through the module's CommandRunner (``runner``)."""

    def __init__(self, runner):
        self.runner = runner

    @staticmethod
    def portal_args(conn):
        args = ['--transport=%s' % conn['transport'], '--traddr=%s' % conn['traddr']]
        if conn['trsvcid'] is not None:
            args.append('--trsvcid=%d' % conn['trsvcid'])
        if conn.get('host_traddr'):
            args.append('--host-traddr=%s' % conn['host_traddr'])
        if conn.get('host_iface'):
            args.append('--host-iface=%s' % conn['host_iface'])
        args += ['--hostnqn=%s' % conn['hostnqn'], '--hostid=%s' % conn['hostid']]
        return args

    @classmethod
    def connect_args(cls, conn):
        args = cls.portal_args(conn) + ['--nqn=%s' % conn['subnqn']]
        for key, flag in (('nr_io_queues', 'nr-io-queues'), ('queue_size', 'queue-size'), ('ctrl_loss_tmo', 'ctrl-loss-tmo'),
                          ('reconnect_delay', 'reconnect-delay'), ('keep_alive_tmo', 'keep-alive-tmo')):
            if conn.get(key) is not None:
                args.append('--%s=%d' % (flag, conn[key]))
        if conn.get('dhchap_secret'):
            args.append('--dhchap-secret=%s' % conn['dhchap_secret'])
        if conn.get('dhchap_ctrl_secret'):
            args.append('--dhchap-ctrl-secret=%s' % conn['dhchap_ctrl_secret'])
        return args

    def run(self, args, changes):
        return self.runner.run(['nvme'] + args, changes=changes)

    def discover(self, portal):
        # Reads the target's discovery log (the discovery controller goes away after it): runs in check mode too.
        rc, out, err = self.run(['discover'] + self.portal_args(portal) + ['--output-format=json'], changes=False)
        if rc != 0:
            return None, (err or out).strip() or 'exit status %d' % rc
        try:
            return fabrics.parse_discovery(out or '{"records": []}'), None
        except ValueError:
            return None, 'unexpected output of nvme discover: %r' % (out[:200],)

    def connect(self, conn):
        rc, out, err = self.run(['connect'] + self.connect_args(conn) + ['--output-format=json'], changes=True)
        device = None
        if rc == 0:
            try:
                device = json.loads(out).get('device')
            except (ValueError, AttributeError):
                device = None  # connected (rc 0) without the JSON line: the kernel's state is read afterwards anyway
        return rc, device, (err or out).strip()

    def disconnect(self, ctrl_name):
        return self.run(['disconnect', '--device=%s' % ctrl_name], changes=True)


def with_retries(attempts, delay, func):
    """Call ``func()`` -> (value, error) up to ``attempts`` times; return (value, errors)."""
    errors = []
    for attempt in range(attempts):
        value, error = func()
        if error is None:
            return value, errors
        errors.append(error)
        if attempt + 1 < attempts and delay:
            time.sleep(delay)
    return None, errors


def ensure_modules(runner, transports):
    missing = [t for t in sorted(set(transports)) if not sysfs.exists('/sys/module/nvme_%s' % t)]
    if not sysfs.exists('/dev/nvme-fabrics') or missing:
        names = ['nvme-fabrics'] + ['nvme-%s' % t for t in missing]
        rc, out, err = runner.run(['modprobe', '-a'] + names, changes=True)
        if rc != 0:
            raise ConnectError('modprobe %s failed: %s' % (' '.join(names), (err or out).strip()))


# ------------------------------------------------------------------ state

def public_ctrl(ctrl):
    keys = ('name', 'state', 'transport', 'address', 'subsysnqn', 'subsystem', 'hostnqn', 'hostid', 'cntlid',
            'io_queues', 'queue_size', 'ctrl_loss_tmo', 'reconnect_delay', 'keep_alive_tmo', 'paths')
    result = dict((k, ctrl.get(k)) for k in keys)
    result['traddr'] = ctrl['addr'].get('traddr')
    result['trsvcid'] = ctrl['addr'].get('trsvcid')
    result['src_addr'] = ctrl['addr'].get('src_addr')
    return result


def snapshot():
    ctrls = fabrics.controllers()
    return ctrls, fabrics.subsystems(ctrls)


def mismatches(conn, ctrl, cpus):
    """(in-place updates, mismatches needing a reconnect) of a live controller against ``conn``."""
    updates, differ = [], []
    delay = conn['reconnect_delay'] if conn['reconnect_delay'] is not None else ctrl['reconnect_delay']
    if conn['reconnect_delay'] is not None and ctrl['reconnect_delay'] != conn['reconnect_delay']:
        updates.append(('reconnect_delay', ctrl['reconnect_delay'], conn['reconnect_delay']))
    if conn['ctrl_loss_tmo'] is not None:
        # Writing reconnect_delay rescales the reported ctrl_loss_tmo: write both then.
        want = fabrics.expected_ctrl_loss_tmo(conn['ctrl_loss_tmo'], delay)
        if ctrl['ctrl_loss_tmo'] != want or updates:
            updates.append(('ctrl_loss_tmo', ctrl['ctrl_loss_tmo'], conn['ctrl_loss_tmo']))
    if conn['dhchap_secret'] and ctrl['dhchap']:
        current = (sysfs.read_attr('%s/%s/dhchap_secret' % (fabrics.CLASS_NVME, ctrl['name'])) or '').strip()
        if current != conn['dhchap_secret']:
            updates.append(('dhchap_secret', MASK, MASK))
    if conn['queue_size'] is not None and ctrl['queue_size'] is not None and ctrl['queue_size'] != conn['queue_size']:
        differ.append('queue_size: live %s, wanted %s' % (ctrl['queue_size'], conn['queue_size']))
    if conn['nr_io_queues'] is not None and ctrl['io_queues'] is not None:
        expected = min(conn['nr_io_queues'], cpus) if cpus else conn['nr_io_queues']
        if ctrl['io_queues'] > conn['nr_io_queues'] or ctrl['io_queues'] < expected:
            differ.append('nr_io_queues: live %s, wanted %s (%s online CPUs)' % (ctrl['io_queues'], conn['nr_io_queues'], cpus))
    if conn['keep_alive_tmo'] is not None and ctrl['keep_alive_tmo'] is not None and ctrl['keep_alive_tmo'] != conn['keep_alive_tmo']:
        differ.append('keep_alive_tmo: live %s, wanted %s' % (ctrl['keep_alive_tmo'], conn['keep_alive_tmo']))
    if ctrl.get('hostid') and ctrl['hostid'] != conn['hostid']:
        differ.append('hostid: live %s, wanted %s' % (ctrl['hostid'], conn['hostid']))
    return updates, differ


def conf_text(conn, params, masked=False):
    def secret(value):
        return MASK if masked and value else value
    args = Nvme.connect_args(dict(conn, dhchap_secret=secret(conn['dhchap_secret']),
                                  dhchap_ctrl_secret=secret(conn['dhchap_ctrl_secret'])))
    attempts = max(1, -(-params['boot_timeout'] // params['boot_retry_delay']))
    values = [
        ('NVMF_TRANSPORT', conn['transport']),
        ('NVMF_TRADDR', conn['traddr']),
        ('NVMF_TRSVCID', '' if conn['trsvcid'] is None else str(conn['trsvcid'])),
        ('NVMF_SUBNQN', conn['subnqn']),
        ('NVMF_HOSTNQN', conn['hostnqn']),
        ('NVMF_HOST_IFACE', conn['host_iface'] or ''),
        ('NVMF_HOST_TRADDR', conn['host_traddr'] or ''),
        ('NVMF_CONNECT_ARGS', ' '.join(args)),
        ('NVMF_RETRY_DELAY', str(params['boot_retry_delay'])),
        ('NVMF_ATTEMPTS', str(attempts)),
    ]
    lines = ['# Managed by inferops.node.nvme_connect - changes are overwritten.',
             '# Read by %s (%s).' % (HELPER, unit_name(conn['name']))]
    lines += ['%s=%s' % (key, shlex.quote(value)) for key, value in values]
    return '\n'.join(lines) + '\n'


def systemctl_states(runner, units):
    """{unit: (UnitFileState, ActiveState)} from one ``systemctl show``."""
    if not units:
        return {}
    rc, out, err = runner.run(['systemctl', 'show', '--property=Id,UnitFileState,ActiveState', '--'] + list(units))
    if rc != 0:
        raise ConnectError('systemctl show failed: %s' % (err or out).strip())
    states = {}
    for block, unit in zip(re.split(r'\n\s*\n', out.strip()), units):
        props = dict(line.split('=', 1) for line in block.splitlines() if '=' in line)
        states[unit] = (props.get('UnitFileState', ''), props.get('ActiveState', ''))
    return states


# ------------------------------------------------------------------ main

def main():
    portal_options = dict(
        transport=dict(type='str', required=True, choices=list(common.TRANSPORTS)),
        traddr=dict(type='str', required=True),
        trsvcid=dict(type='int'),
        host_traddr=dict(type='str'),
        host_iface=dict(type='str'),
        hostnqn=dict(type='str'),
        hostid=dict(type='str'),
    )
    conn_options = dict(portal_options)
    conn_options.update(
        name=dict(type='str'),
        state=dict(type='str', default='present', choices=['present', 'absent']),
        subnqn=dict(type='str', required=True),
        nr_io_queues=dict(type='int'),
        queue_size=dict(type='int'),
        ctrl_loss_tmo=dict(type='int'),
        reconnect_delay=dict(type='int'),
        keep_alive_tmo=dict(type='int'),
        auth=dict(type='str', default='none', choices=['none', 'dhchap']),
        dhchap_secret=dict(type='str', no_log=True),
        dhchap_ctrl_secret=dict(type='str', no_log=True),
    )
    module = AnsibleModule(
        argument_spec=dict(
            connections=dict(type='list', elements='dict', default=[], options=conn_options),
            discover=dict(type='list', elements='dict', default=[], options=portal_options),
            persistent=dict(type='str', default='ignore', choices=['present', 'absent', 'ignore']),
            retries=dict(type='int', default=3),
            retry_delay=dict(type='int', default=5),
            connect_timeout=dict(type='int', default=30),
            boot_timeout=dict(type='int', default=600),
            boot_retry_delay=dict(type='int', default=5),
            reconnect_on_change=dict(type='bool', default=False),
            force=dict(type='bool', default=False),
        ),
        supports_check_mode=True,
    )
    runner = CommandRunner(module)
    params = module.params
    result = dict(changed=False, connections=[], discovery=[], units=[], files_changed=[], command_log=runner.log)

    # ---- 1. validate everything
    try:
        conns, portals = validate(module)
    except common.NvmeInputError as exc:
        module.fail_json(msg=to_native(exc), **result)

    nvme = Nvme(runner)
    try:
        plan = make_plan(module, nvme, conns, portals)
        if not module.check_mode:
            apply(module, nvme, plan)
        report(module, plan, result)
    except ConnectError as exc:
        module.fail_json(msg=to_native(exc), **result)
    module.exit_json(**result)


# ------------------------------------------------------------------ plan

def make_plan(module, nvme, conns, portals):
    """What would change, from the kernel's and systemd's state; refusals raise ConnectError.

    Nothing changes here, except that explicit discovery (``discover``, read-only for the
    target) loads the transport's kernel module outside check mode, so it can ask.
    """
    params = module.params
    plan = dict(discovery=[], entries=[], files=[], units=[])
    if portals:
        if not module.check_mode:
            ensure_modules(nvme.runner, [p['transport'] for p in portals])
        for portal in portals:
            records, errors = with_retries(params['retries'], params['retry_delay'], lambda p=portal: nvme.discover(p))
            if records is None:
                raise ConnectError('discovery at %s failed after %d attempts: %s' % (describe(portal), len(errors), errors[-1]))
            plan['discovery'].append(dict(transport=portal['transport'], traddr=portal['traddr'], trsvcid=portal['trsvcid'],
                                          host_iface=portal['host_iface'], host_traddr=portal['host_traddr'], records=records))

    ctrls, subsystems = snapshot()
    plan['before'] = connection_lines(ctrls)
    cpus = fabrics.online_cpus()
    for conn in conns:
        matched = [c for c in ctrls if fabrics.matches(c, conn)]
        entry = dict(conn=conn, matched=matched, updates=[], differ=[], action='unchanged')
        if conn['state'] == 'present':
            if not matched:
                entry['action'] = 'connected'
            else:
                for ctrl in matched:
                    updates, differ = mismatches(conn, ctrl, cpus)
                    entry['updates'] += [(ctrl['name'],) + u for u in updates]
                    entry['differ'] += ['%s %s' % (ctrl['name'], d) for d in differ]
                if entry['differ'] and params['reconnect_on_change']:
                    entry['action'] = 'reconnected'
                elif entry['updates']:
                    entry['action'] = 'updated'
        else:
            entry['action'] = 'disconnected' if matched else 'absent'
        plan['entries'].append(entry)
    if not params['force']:
        refuse_last_paths_in_use(plan['entries'], ctrls, subsystems)

    if params['persistent'] != 'ignore':
        if not sysfs.isdir('/run/systemd/system'):
            raise ConnectError('persistent=%s needs systemd (no /run/systemd/system on this host)' % params['persistent'])
        plan['files'] = plan_files(module, plan['entries'])
        plan['units'] = plan_units(module, nvme.runner, plan['entries'])
    return plan


def refuse_last_paths_in_use(entries, ctrls, subsystems):
    """Never drop the last path of a namespace that is mounted, swap or held."""
    removing = set()
    for entry in entries:
        if entry['action'] in ('disconnected', 'reconnected'):
            removing.update(c['name'] for c in entry['matched'])
    adding = set(e['conn']['subnqn'] for e in entries if e['action'] == 'connected')
    for entry in entries:
        if entry['action'] not in ('disconnected', 'reconnected'):
            continue
        for ctrl in entry['matched']:
            subsys = subsystems.get(ctrl['subsystem'] or '')
            if subsys is None:
                continue
            others = [c for c in ctrls if c['name'] in subsys['controllers'] and c['name'] not in removing
                      and c['state'] in ('live', 'connecting', 'resetting')]
            if others or (entry['action'] == 'disconnected' and subsys['nqn'] in adding):
                continue
            busy = []
            for ns in subsys['namespaces']:
                busy += ['%s %s' % (ns['device'], reason) for reason in fabrics.device_in_use(ns['name'])]
            if busy:
                raise ConnectError(
                    'connections[%d] (%s, %s): refusing to %s %s, the last path to %s (%s); '
                    'unmount first or set force=true' % (
                        entry['conn']['index'], describe(entry['conn']), entry['conn']['subnqn'],
                        'disconnect' if entry['action'] == 'disconnected' else 'reconnect',
                        ctrl['name'], subsys['name'], '; '.join(busy)))


# ------------------------------------------------------------------ apply

def apply(module, nvme, plan):
    """Connections first (new paths before old ones go), then the boot records and units."""
    entries = plan['entries']
    transports = [e['conn']['transport'] for e in entries if e['action'] in ('connected', 'reconnected')]
    if transports:
        ensure_modules(nvme.runner, transports)
    for entry in entries:
        if entry['action'] == 'connected':
            entry['discovery'] = connect(module, nvme, entry['conn'])
    for entry in entries:
        if entry['action'] == 'reconnected':
            for ctrl in entry['matched']:
                disconnect(module, nvme, entry['conn'], ctrl)
            entry['discovery'] = connect(module, nvme, entry['conn'])
        elif entry['action'] == 'updated':
            apply_updates(entry)
    for entry in entries:
        if entry['action'] == 'disconnected':
            for ctrl in entry['matched']:
                disconnect(module, nvme, entry['conn'], ctrl)
    for entry in entries:
        if entry['conn']['state'] == 'present' and entry['action'] in ('unchanged', 'updated'):
            wait_reconnected(module, entry)
    for change in plan['files']:
        if change['content'] is None:
            remove_file(change['path'])
        else:
            textfile.write_text_atomic(module, sysfs.host_path(change['path']), change['content'], prefix='.inferops-nvmf.',
                                       mode=0o600, force_mode=True)
    for unit in plan['units']:
        for args in unit['run']:
            run_systemctl(nvme.runner, *args)


# ------------------------------------------------------------------ report

def report(module, plan, result):
    """The result from the kernel's state after the call (the plan's in check mode)."""
    params = module.params
    ctrls, subsystems = snapshot()
    result['discovery'] = plan['discovery']
    for entry in plan['entries']:
        conn = entry['conn']
        mine = [c for c in ctrls if fabrics.matches(c, conn)]
        subsys = None
        for ctrl in mine:
            subsys = subsystems.get(ctrl['subsystem'] or '') or subsys
        if subsys is None and conn['state'] == 'present':
            subsys = next((s for s in subsystems.values() if s['nqn'] == conn['subnqn']), None)
        for ctrl in mine:
            if ctrl['state'] != 'live':
                module.warn('%s (%s, %s) is %s: the kernel is reconnecting it' % (ctrl['name'], describe(conn), conn['subnqn'], ctrl['state']))
        differ = entry['differ'] if entry['action'] != 'reconnected' else []
        for text in differ:
            module.warn('connections[%d] (%s): %s; needs a reconnect (reconnect_on_change=true)' % (conn['index'], describe(conn), text))
        item = dict(
            name=conn['name'], state=conn['state'], action=entry['action'], transport=conn['transport'],
            traddr=conn['traddr'], trsvcid=conn['trsvcid'], subnqn=conn['subnqn'], hostnqn=conn['hostnqn'],
            hostid=conn['hostid'], host_iface=conn['host_iface'], host_traddr=conn['host_traddr'],
            controllers=[public_ctrl(c) for c in mine],
            subsystem=None, devices=[], mismatches=differ,
            unit=unit_name(conn['name']) if params['persistent'] == 'present' and conn['state'] == 'present' else None,
            discovery=entry.get('discovery'),
        )
        if subsys is not None:
            by_name = dict((c['name'], c) for c in ctrls)
            item['subsystem'] = dict(name=subsys['name'], nqn=subsys['nqn'], controllers=[
                dict(name=n, state=by_name[n]['state'], transport=by_name[n]['transport'], address=by_name[n]['address'])
                for n in subsys['controllers'] if n in by_name])
            item['devices'] = subsys['namespaces']
        result['connections'].append(item)
    result['files_changed'] = [f['path'] for f in plan['files']]
    result['units'] = [dict(name=u['name'], enabled=u['enabled'], active=u['active']) for u in plan['units']]
    result['changed'] = (any(e['action'] not in ('unchanged', 'absent') for e in plan['entries']) or bool(plan['files'])
                         or any(u['run'] for u in plan['units']))
    if module._diff:
        after = connection_lines(ctrls) if not module.check_mode else planned_lines(plan['before'], plan['entries'])
        diffs = [dict(before_header='NVMe-oF connections', after_header='NVMe-oF connections', before=plan['before'], after=after)]
        # Settings written in place leave the connection lines as they were: one line per setting.
        updates = [u for e in plan['entries'] if e['action'] == 'updated' for u in e['updates']]
        if updates:
            diffs.append(dict(before_header='NVMe-oF controller settings', after_header='NVMe-oF controller settings',
                              before=''.join('%s %s=%s\n' % (name, key, old) for name, key, old, dummy in updates),
                              after=''.join('%s %s=%s\n' % (name, key, MASK + ' (replaced)' if key == 'dhchap_secret' else new)
                                            for name, key, dummy, new in updates)))
        for change in plan['files']:
            diffs.append(dict(before_header=change['path'], after_header=change['path'],
                              before=masked_file(change['before'] or ''), after=masked_file(change['content'] or '')))
        result['diff'] = diffs


def masked_file(text):
    """A settings file with its DH-HMAC-CHAP secrets masked."""
    return re.sub(r'(--dhchap-(?:ctrl-)?secret=)\S+?(?=[\s\'])', r'\1' + MASK, text)


def connection_lines(ctrls):
    lines = []
    for ctrl in ctrls:
        if ctrl['transport'] in (None, 'pcie') or ctrl['cntrltype'] == 'discovery':
            continue
        lines.append('%s %s %s %s %s\n' % (ctrl['name'], ctrl['transport'], ctrl['address'], ctrl['subsysnqn'], ctrl['state']))
    return ''.join(lines)


def planned_lines(before, plan):
    lines = before
    for entry in plan:
        conn = entry['conn']
        if entry['action'] == 'connected':
            lines += '(new) %s traddr=%s,trsvcid=%s %s live\n' % (conn['transport'], conn['traddr'], conn['trsvcid'], conn['subnqn'])
        elif entry['action'] == 'disconnected':
            for ctrl in entry['matched']:
                lines = ''.join(line for line in lines.splitlines(True) if not line.startswith(ctrl['name'] + ' '))
    return lines


def plan_files(module, entries):
    """[{path, content (None to remove), before}] of the per-connection settings files that differ (mode 0600)."""
    params = module.params
    files = []
    for entry in entries:
        conn = entry['conn']
        path = '%s/%s.conf' % (CONF_DIR, conn['name'])
        content = conf_text(conn, params) if params['persistent'] == 'present' and conn['state'] == 'present' else None
        current = textfile.read_text(sysfs.host_path(path))
        if content is None:
            if current is not None or os.path.lexists(sysfs.host_path(path)):
                files.append(dict(path=path, content=None, before=current))
        elif current != content or (os.stat(sysfs.host_path(path)).st_mode & 0o7777) != 0o600:
            files.append(dict(path=path, content=content, before=current))
    return files


def plan_units(module, runner, entries):
    """[{name, enabled, active (after the call), run: [systemctl arguments]}] for every connection's unit."""
    params = module.params
    want_on = [unit_name(e['conn']['name']) for e in entries if params['persistent'] == 'present' and e['conn']['state'] == 'present']
    want_off = [unit_name(e['conn']['name']) for e in entries if unit_name(e['conn']['name']) not in want_on]
    if want_on and not sysfs.exists(UNIT_PATH):
        message = ('persistent=present needs the boot unit %s and its helper %s, which the inferops.node.nvmeof_initiator '
                   'role installs' % (UNIT_PATH, HELPER))
        if not module.check_mode:
            raise ConnectError(message)
        module.warn(message + ' (check mode: not there yet)')
    states = systemctl_states(runner, want_on + want_off)
    units = []
    for unit in want_on:
        enabled, active = states.get(unit, ('', ''))
        run = [] if enabled == 'enabled' else [('enable', unit)]
        # The helper finds the connection made before in sysfs and exits at once.
        run += [] if active == 'active' else [('start', unit)]
        units.append(dict(name=unit, enabled=True, active=True, run=run))
    for unit in want_off:
        enabled, active = states.get(unit, ('', ''))
        on = enabled in ('enabled', 'enabled-runtime', 'linked') or active in ('active', 'failed', 'activating')
        units.append(dict(name=unit, enabled=False, active=False, run=[('disable', '--now', unit)] if on else []))
    return units


def run_systemctl(runner, *args):
    rc, out, err = runner.run(['systemctl'] + list(args), changes=True)
    if rc != 0:
        raise ConnectError('systemctl %s failed: %s' % (' '.join(args), (err or out).strip()))


def connect(module, nvme, conn):
    """Discover, connect and wait until live with namespaces; return the discovery records."""
    params = module.params
    where = describe(conn)
    records, errors = with_retries(params['retries'], params['retry_delay'], lambda: nvme.discover(conn))
    if records is None:
        raise ConnectError('connections[%d]: target %s (subsystem %s) unreachable: discovery failed after %d attempts: %s' % (
            conn['index'], where, conn['subnqn'], len(errors), errors[-1]))
    offered = [r['subnqn'] for r in records if r.get('subtype') != 'current discovery subsystem' and r['subnqn'] != common.DISCOVERY_NQN]
    if conn['subnqn'] not in offered:
        raise ConnectError(
            'connections[%d]: target %s does not offer subsystem %s to host %s (its discovery log lists: %s); '
            'is this host NQN in the subsystem\'s allowed hosts?' % (
                conn['index'], where, conn['subnqn'], conn['hostnqn'], ', '.join(sorted(set(offered))) or 'nothing'))

    def attempt():
        rc, device, message = nvme.connect(conn)
        if rc == 0:
            return device or '', None
        # Another attempt may have got through in the meantime: the kernel is the judge.
        ctrls = fabrics.controllers()
        if any(fabrics.matches(c, conn) for c in ctrls):
            return '', None
        return None, message or 'nvme connect exit status %d' % rc
    device, errors = with_retries(params['retries'], params['retry_delay'], attempt)
    if device is None:
        raise ConnectError('connections[%d]: connecting to %s (subsystem %s, host %s) failed after %d attempts: %s' % (
            conn['index'], where, conn['subnqn'], conn['hostnqn'], len(errors), errors[-1]))
    wait_live(module, conn)
    return records


def wait_live(module, conn):
    deadline = time.monotonic() + module.params['connect_timeout']
    state = 'missing'
    while True:
        ctrls, subsystems = snapshot()
        mine = [c for c in ctrls if fabrics.matches(c, conn)]
        live = [c for c in mine if c['state'] == 'live']
        state = ', '.join('%s %s' % (c['name'], c['state']) for c in mine) or 'no controller'
        if live:
            subsys = subsystems.get(live[0]['subsystem'] or '')
            namespaces = subsys['namespaces'] if subsys else []
            if namespaces and all(ns['exists'] for ns in namespaces):
                return
            state += '; namespaces: %s' % (', '.join('%s%s' % (ns['device'], '' if ns['exists'] else ' (no device node)')
                                                     for ns in namespaces) or 'none')
        if time.monotonic() >= deadline:
            if live:
                module.warn('connections[%d] (%s): live, but %s after %ds' % (
                    conn['index'], describe(conn), state, module.params['connect_timeout']))
                return
            raise ConnectError('connections[%d]: %s (subsystem %s) not live %ds after connecting: %s' % (
                conn['index'], describe(conn), conn['subnqn'], module.params['connect_timeout'], state))
        time.sleep(0.5)


def wait_reconnected(module, entry):
    """A wanted connection whose controllers are all reconnecting: give the kernel ``retries`` x
    ``retry_delay`` seconds, then fail - the target is unreachable."""
    params = module.params
    conn = entry['conn']
    names = [c['name'] for c in entry['matched']]
    attempts = 0
    while True:
        attempts += 1
        mine = [c for c in fabrics.controllers() if c['name'] in names and fabrics.matches(c, conn)]
        if not mine or any(c['state'] == 'live' for c in mine):
            return
        if attempts >= params['retries']:
            raise ConnectError(
                'connections[%d]: target %s (subsystem %s) unreachable: %s still not live after %d attempts %ds apart '
                '(the kernel keeps reconnecting for ctrl_loss_tmo=%s s)' % (
                    conn['index'], describe(conn), conn['subnqn'],
                    ', '.join('%s is %s' % (c['name'], c['state']) for c in mine), attempts, params['retry_delay'],
                    ', '.join(str(c['ctrl_loss_tmo']) for c in mine)))
        time.sleep(params['retry_delay'])


def disconnect(module, nvme, conn, ctrl):
    rc, out, err = nvme.disconnect(ctrl['name'])
    deadline = time.monotonic() + 30
    while True:
        names = [c['name'] for c in fabrics.controllers() if fabrics.matches(c, conn)]
        if ctrl['name'] not in names:
            return
        if time.monotonic() >= deadline:
            raise ConnectError('connections[%d]: %s (%s) still present after nvme disconnect (exit %d): %s' % (
                conn['index'], ctrl['name'], describe(conn), rc, (err or out).strip()))
        time.sleep(0.5)


def apply_updates(entry):
    conn = entry['conn']
    # reconnect_delay first: the kernel derives ctrl_loss_tmo from it.
    order = {'reconnect_delay': 0, 'ctrl_loss_tmo': 1, 'dhchap_secret': 2}
    for ctrl_name, key, dummy, value in sorted(entry['updates'], key=lambda u: order[u[1]]):
        attr = '%s/%s/%s' % (fabrics.CLASS_NVME, ctrl_name, key)
        if key == 'dhchap_secret':
            value = conn['dhchap_secret']
        try:
            sysfs.write_attr(attr, value)
        except sysfs.SysfsWriteError as exc:
            raise ConnectError('connections[%d] (%s): %s' % (conn['index'], describe(conn), to_native(exc)))


if __name__ == '__main__':
    main()
