# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Validation shared by the NVMe-oF modules (nvme_connect, nvmet_subsystem).

Every function returns the normalised value or raises ``NvmeInputError`` whose message
names the option and the value, so a module can validate its whole input before it
changes anything.

* ``check_nqn`` - NVMe Qualified Name syntax (NVMe Base Specification 2.0, 4.5): at most
  223 bytes of UTF-8, either ``nqn.2014-08.org.nvmexpress:uuid:<uuid>``, the discovery NQN,
  or ``nqn.<yyyy-mm>.<reverse domain>:<string>``.
* ``check_traddr`` - transport address: an IPv4/IPv6 address for tcp and rdma (validated
  with netaddr when it is installed on the managed host, else with the standard
  ``ipaddress`` module, same rules), ``nn-0x<16 hex>:pn-0x<16 hex>`` for fc.
* ``check_svcid`` - TCP/RDMA service id (port) 1-65535.
* ``check_dhchap_secret`` - ``DHHC-1:<hh>:<base64 key + CRC-32>:`` as written by
  ``nvme gen-dhchap-key``, with the CRC checked.
* ``kernel_config`` - value of a ``CONFIG_*`` option of the running kernel.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import ipaddress
import re
import struct
import uuid
import zlib

from ansible_collections.inferops.node.plugins.module_utils import sysfs

try:
    import netaddr
    HAS_NETADDR = True
except ImportError:  # pragma: no cover - depends on the managed host
    netaddr = None
    HAS_NETADDR = False

__all__ = [
    'NvmeInputError', 'DISCOVERY_NQN', 'TRANSPORTS', 'IP_TRANSPORTS', 'HAS_NETADDR',
    'check_nqn', 'check_uuid', 'check_traddr', 'check_svcid', 'check_dhchap_secret',
    'adrfam_of', 'kernel_config', 'C_LOCALE',
]

C_LOCALE = {'LANG': 'C', 'LC_ALL': 'C', 'LC_MESSAGES': 'C'}

DISCOVERY_NQN = 'nqn.2014-08.org.nvmexpress.discovery'
TRANSPORTS = ('tcp', 'rdma', 'fc')
IP_TRANSPORTS = ('tcp', 'rdma')
NQN_MAX_BYTES = 223

_UUID_NQN_PREFIX = 'nqn.2014-08.org.nvmexpress:uuid:'
# nqn.<year>-<month>.<reverse domain name>:<user string>; the domain labels are
# letters, digits and hyphens (not at a label's ends).
_NQN_RE = re.compile(
    r'^nqn\.(?P<year>[0-9]{4})-(?P<month>0[1-9]|1[0-2])\.'
    r'(?P<domain>[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*)'
    r':(?P<rest>.+)$')
_UUID_RE = re.compile(r'^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$')
_FC_RE = re.compile(r'^nn-0x[0-9a-fA-F]{16}:pn-0x[0-9a-fA-F]{16}$')
_DHCHAP_RE = re.compile(r'^DHHC-1:(?P<hash>0[0-3]):(?P<key>[A-Za-z0-9+/]+={0,2}):$')


class NvmeInputError(ValueError):
    """An option value is invalid; the message names the option and the value."""


def check_nqn(value, option, allow_discovery=False):
    """Validate an NQN and return it unchanged."""
    if not isinstance(value, str) or not value:
        raise NvmeInputError('%s=%r is not an NQN' % (option, value))
    if len(value.encode('utf-8')) > NQN_MAX_BYTES:
        raise NvmeInputError('%s=%r is longer than %d bytes' % (option, value, NQN_MAX_BYTES))
    if any(c.isspace() or ord(c) < 0x20 or c in '/\\' for c in value):
        raise NvmeInputError('%s=%r contains whitespace, a control character or a slash' % (option, value))
    if value == DISCOVERY_NQN:
        if allow_discovery:
            return value
        raise NvmeInputError('%s=%r is the discovery NQN, not an NVM subsystem or host NQN' % (option, value))
    if value.startswith(_UUID_NQN_PREFIX):
        if not _UUID_RE.match(value[len(_UUID_NQN_PREFIX):]):
            raise NvmeInputError('%s=%r: the part after %s is not a UUID' % (option, value, _UUID_NQN_PREFIX))
        return value
    found = _NQN_RE.match(value)
    if not found:
        raise NvmeInputError('%s=%r is not an NQN: expected nqn.<yyyy-mm>.<reverse domain>:<name> '
                             '(e.g. nqn.2026-09.internal.ai:models-pool-01) or '
                             'nqn.2014-08.org.nvmexpress:uuid:<uuid>' % (option, value))
    if int(found.group('year')) < 1970:
        raise NvmeInputError('%s=%r: the date %s-%s is not a plausible domain registration date' % (
            option, value, found.group('year'), found.group('month')))
    return value


def check_uuid(value, option):
    """Validate a UUID string (host ID, namespace UUID) and return it lower-cased."""
    if not isinstance(value, str) or not _UUID_RE.match(value):
        raise NvmeInputError('%s=%r is not a UUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)' % (option, value))
    return str(uuid.UUID(value))


def _ip(value):
    """The address as a normalised string, or None when it is not an IPv4/IPv6 address."""
    if HAS_NETADDR:
        try:
            # INET_PTON: no legacy shorthand such as '10.1' or octal octets.
            return str(netaddr.IPAddress(value, flags=netaddr.INET_PTON))
        except (netaddr.AddrFormatError, ValueError, TypeError):
            return None
    try:
        return str(ipaddress.ip_address(value))
    except ValueError:
        return None


def check_traddr(transport, value, option):
    """Validate a transport address for ``transport``; return the normalised address."""
    if not isinstance(value, str) or not value.strip():
        raise NvmeInputError('%s=%r is empty' % (option, value))
    value = value.strip()
    if transport in IP_TRANSPORTS:
        address = _ip(value)
        if address is None:
            raise NvmeInputError('%s=%r is not an IPv4 or IPv6 address (transport %s)' % (option, value, transport))
        if address in ('0.0.0.0', '::') or address.startswith('255.'):
            raise NvmeInputError('%s=%r is not a unicast address' % (option, value))
        return address
    if transport == 'fc':
        if not _FC_RE.match(value):
            raise NvmeInputError('%s=%r is not an FC address (nn-0x<16 hex digits>:pn-0x<16 hex digits>)' % (option, value))
        return value.lower()
    raise NvmeInputError('%s: unknown transport %r' % (option, transport))


def adrfam_of(transport, address):
    """nvmet address family of a (validated) address."""
    if transport == 'fc':
        return 'fc'
    return 'ipv6' if ':' in address else 'ipv4'


def check_svcid(value, option):
    """Validate a TCP/RDMA service id (port number); return it as int."""
    if isinstance(value, bool):
        raise NvmeInputError('%s=%r is not a port number' % (option, value))
    try:
        number = int(str(value).strip())
    except (TypeError, ValueError):
        raise NvmeInputError('%s=%r is not a port number' % (option, value))
    if not 1 <= number <= 65535:
        raise NvmeInputError('%s=%r is out of range (1-65535)' % (option, value))
    return number


def check_dhchap_secret(value, option):
    """Validate a DH-HMAC-CHAP secret in the NVMe TP 8006 representation; return it.

    The message never repeats the secret itself.
    """
    if not isinstance(value, str):
        raise NvmeInputError('%s is not a string' % option)
    found = _DHCHAP_RE.match(value.strip())
    if not found:
        raise NvmeInputError('%s is not a DH-HMAC-CHAP secret: expected DHHC-1:<00|01|02|03>:<base64>: '
                             '(see nvme gen-dhchap-key)' % option)
    try:
        raw = base64.b64decode(found.group('key'), validate=True)
    except (binascii.Error, ValueError):
        raise NvmeInputError('%s: the key part is not valid base64' % option)
    if len(raw) not in (36, 52, 68):
        raise NvmeInputError('%s: the key is %d bytes; expected 32, 48 or 64 bytes plus a 4-byte CRC' % (
            option, max(0, len(raw) - 4)))
    key, crc = raw[:-4], struct.unpack('<I', raw[-4:])[0]
    if zlib.crc32(key) & 0xffffffff != crc:
        raise NvmeInputError('%s: the CRC-32 of the key does not match (mistyped secret?)' % option)
    return value.strip()


def kernel_config(option):
    """``'y'``, ``'m'`` or ``'n'`` for a ``CONFIG_*`` option of the running kernel; None when unknown.

    Reads ``/boot/config-<release>`` (Debian, Ubuntu) or ``/proc/config.gz``.
    """
    release = sysfs.read_attr('/proc/sys/kernel/osrelease')
    text = None
    if release:
        text = sysfs.read_attr('/boot/config-%s' % release.strip())
    if text is None:
        try:
            with gzip.open(sysfs.host_path('/proc/config.gz'), 'rt') as handle:
                text = handle.read()
        except (IOError, OSError):
            text = None
    if text is None:
        return None
    found = re.search(r'^%s=(\w+)$' % re.escape(option), text, re.M)
    if found:
        return found.group(1)
    return 'n'
