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
* ``check_range`` - the numeric limits of the connection settings (``LIMITS``) and of the
  target's port ids and namespace ids.
* ``check_name`` / ``check_netdev`` - connection names and network interface names.
* ``check_dhchap_pair`` - ``auth: dhchap`` needs the host secret; a controller secret needs it too.
* ``kernel_config`` - value of a ``CONFIG_*`` option of the running kernel.

The modules raise the first ``NvmeInputError`` (its text is ``option=value ...``); the roles,
through the filters, collect them all with ``Refusals`` and word each one as
``option = "value": reason`` (``NvmeInputError.entry``), so both say the same thing from one rule.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import ipaddress
import json
import os
import re
import struct
import uuid
import zlib

# Relative imports: this file ships in the boot packages (common/boot_package.py), run with python3 -ES outside
# Ansible as the package inferops: only the standard library and other module_utils files, imported relatively.
from ..common import sysfs

try:
    import netaddr
    HAS_NETADDR = True
except ImportError:  # pragma: no cover - depends on the managed host
    netaddr = None
    HAS_NETADDR = False

__all__ = [
    'NvmeInputError', 'DISCOVERY_NQN', 'TRANSPORTS', 'IP_TRANSPORTS', 'HAS_NETADDR',
    'check_nqn', 'check_uuid', 'check_transport', 'check_traddr', 'check_svcid', 'check_dhchap_secret',
    'adrfam_of', 'kernel_config', 'LIMITS', 'check_range', 'check_name', 'check_netdev',
    'check_dhchap_pair', 'check_abspath', 'check_size', 'Refusals',
]

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
NAME_RE = re.compile(r'^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$')
NETDEV_RE = re.compile(r'^[A-Za-z0-9_.:-]{1,15}$')
_SIZE_RE = re.compile(r'^(?P<num>[0-9]+)(?P<unit>[KMGT]?)$')
NSID_MAX = 0xfffffffe

# The connection settings' limits (nvme-cli and the kernel's fabrics options), and the
# integer options of the roles; (low, high, how the range reads in a message).
LIMITS = {
    'nr_io_queues': (1, 1024, '1-1024'),
    'queue_size': (16, 1024, '16-1024'),
    'reconnect_delay': (1, 2 ** 31 - 1, '1-2147483647'),
    'keep_alive_tmo': (1, 65535, '1-65535'),
    'ctrl_loss_tmo': (-1, 2 ** 31 - 1, '-1 (forever) or 0-2147483647'),
    'port_id': (1, 65535, '1-65535'),
    'nsid': (1, NSID_MAX, '1-%d' % NSID_MAX),
    'retries': (1, 100, '1-100'),
    'retry_delay': (0, 3600, '0-3600'),
    'boot_timeout': (1, 86400, '1-86400'),
    'restore_timeout': (1, 2 ** 31 - 1, '1-2147483647'),
}


class NvmeInputError(ValueError):
    """An option value is invalid; the message names the option and the value.

    ``option``, ``value`` and ``reason`` (the message without the option and value) let
    ``entry()`` word the same refusal for a role variable; ``secret`` keeps the value out.
    """

    def __init__(self, message, option=None, value=None, reason=None, secret=False):
        super(NvmeInputError, self).__init__(message)
        self.option = option
        self.value = value
        self.reason = reason
        self.secret = secret

    def entry(self, variable=''):
        """``<variable><option> = <value as JSON>: <reason>`` (no value for a secret)."""
        if self.reason is None or self.option is None:
            return '%s%s' % (variable, self)
        if self.secret:
            return '%s%s: %s' % (variable, self.option, self.reason)
        return '%s%s = %s: %s' % (variable, self.option, json.dumps(self.value), self.reason)


def _refuse(option, value, reason, message=None, secret=False):
    """An NvmeInputError: ``message`` for the modules (default ``option=value is reason``)."""
    if message is None:
        message = '%s is %s' % (option, reason) if secret else '%s=%r is %s' % (option, value, reason)
    return NvmeInputError(message, option=option, value=value, reason=reason, secret=secret)


class Refusals(list):
    """Every refusal of a role's input at once: ``check()`` records instead of raising."""

    def check(self, func, *args, **kwargs):
        """``func(*args, **kwargs)``, or None with its refusal recorded (worded by ``entry()``)."""
        try:
            return func(*args, **kwargs)
        except NvmeInputError as exc:
            self.append(exc.entry())
            return None


def check_nqn(value, option, allow_discovery=False):
    """Validate an NQN and return it unchanged."""
    if not isinstance(value, str) or not value:
        raise _refuse(option, value, 'not an NQN')
    if len(value.encode('utf-8')) > NQN_MAX_BYTES:
        raise _refuse(option, value, 'longer than %d bytes' % NQN_MAX_BYTES)
    if any(c.isspace() or ord(c) < 0x20 or c in '/\\' for c in value):
        raise _refuse(option, value, 'not an NQN: it contains whitespace, a control character or a slash',
                      '%s=%r contains whitespace, a control character or a slash' % (option, value))
    if value == DISCOVERY_NQN:
        if allow_discovery:
            return value
        raise _refuse(option, value, 'the discovery NQN, not an NVM subsystem or host NQN')
    if value.startswith(_UUID_NQN_PREFIX):
        if not _UUID_RE.match(value[len(_UUID_NQN_PREFIX):]):
            reason = 'not an NQN: the part after %s is not a UUID' % _UUID_NQN_PREFIX
            raise _refuse(option, value, reason, '%s=%r: the part after %s is not a UUID' % (option, value, _UUID_NQN_PREFIX))
        return value
    found = _NQN_RE.match(value)
    if not found:
        raise _refuse(option, value, 'not an NQN: expected nqn.<yyyy-mm>.<reverse domain>:<name> '
                      '(e.g. nqn.2026-09.internal.ai:models-pool-01, at most %d bytes) or '
                      'nqn.2014-08.org.nvmexpress:uuid:<uuid>' % NQN_MAX_BYTES)
    if int(found.group('year')) < 1970:
        reason = 'not an NQN: the date %s-%s is not a plausible domain registration date' % (
            found.group('year'), found.group('month'))
        raise _refuse(option, value, reason, '%s=%r: the date %s-%s is not a plausible domain registration date' % (
            option, value, found.group('year'), found.group('month')))
    return value


def check_uuid(value, option):
    """Validate a UUID string (host ID, namespace UUID) and return it lower-cased."""
    if not isinstance(value, str) or not _UUID_RE.match(value):
        raise _refuse(option, value, 'not a UUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)')
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


def check_transport(value, option):
    """One of ``TRANSPORTS``."""
    if value not in TRANSPORTS:
        raise _refuse(option, value, 'not one of %s' % ', '.join(TRANSPORTS))
    return value


def check_traddr(transport, value, option):
    """Validate a transport address for ``transport``; return the normalised address."""
    if not isinstance(value, str) or not value.strip():
        raise _refuse(option, value, 'empty (an address is required)', '%s=%r is empty' % (option, value))
    value = value.strip()
    if transport in IP_TRANSPORTS:
        address = _ip(value)
        if address is None:
            raise _refuse(option, value, 'not an IPv4 or IPv6 address (transport %s)' % transport)
        if address in ('0.0.0.0', '::') or address.startswith('255.'):
            raise _refuse(option, value, 'not a unicast address')
        return address
    if transport == 'fc':
        if not _FC_RE.match(value):
            raise _refuse(option, value, 'not an FC address (nn-0x<16 hex digits>:pn-0x<16 hex digits>)')
        return value.lower()
    raise _refuse(option, transport, 'not one of %s' % ', '.join(TRANSPORTS), '%s: unknown transport %r' % (option, transport))


def adrfam_of(transport, address):
    """nvmet address family of a (validated) address."""
    if transport == 'fc':
        return 'fc'
    return 'ipv6' if ':' in address else 'ipv4'


def check_svcid(value, option):
    """Validate a TCP/RDMA service id (port number); return it as int."""
    if isinstance(value, bool):
        raise _refuse(option, value, 'not a port number')
    try:
        number = int(str(value).strip())
    except (TypeError, ValueError):
        raise _refuse(option, value, 'not a port number')
    if not 1 <= number <= 65535:
        raise _refuse(option, value, 'out of range (1-65535)')
    return number


def check_range(value, option, kind):
    """An integer within ``LIMITS[kind]``; None stays None."""
    if value is None:
        return None
    low, high, text = LIMITS[kind]
    if isinstance(value, bool) or not isinstance(value, int):
        raise _refuse(option, value, 'not an integer')
    if not low <= value <= high:
        raise _refuse(option, value, 'out of range (%s)' % text)
    return value


def check_name(value, option):
    """A connection name (boot unit instance, settings file name)."""
    if not isinstance(value, str) or not NAME_RE.match(value):
        raise _refuse(option, value, 'not a name: use letters, digits, ".", "_" and "-" (at most 100)',
                      '%s=%r: use letters, digits, ".", "_" and "-" (at most 100)' % (option, value))
    return value


def check_netdev(value, option):
    """A network interface name (at most 15 characters, no slash or blank)."""
    if not isinstance(value, str) or not NETDEV_RE.match(value) or value in ('.', '..'):
        raise _refuse(option, value, 'not an interface name')
    return value


def check_abspath(value, option, what='an absolute path'):
    """An absolute path (not only ``/`` when ``what`` is a mount point)."""
    if not isinstance(value, str) or not os.path.isabs(value) or (what != 'an absolute path' and value.rstrip('/') == ''):
        raise _refuse(option, value, 'not %s' % what)
    return value


def check_size(value, option):
    """``64M``, ``2G``, ``512`` (bytes) -> bytes; zero is refused."""
    found = _SIZE_RE.match(str(value).strip().upper())
    if not found or int(found.group('num')) == 0:
        raise _refuse(option, value, 'not a size (e.g. 64M, 2G)')
    return int(found.group('num')) * 1024 ** ' KMGT'.index(found.group('unit') or ' ')


def check_dhchap_pair(prefix, auth, secret, ctrl_secret, secret_key, ctrl_key):
    """``auth: dhchap`` needs the host secret; a controller secret needs the host secret."""
    if auth == 'dhchap' and not secret:
        raise _refuse(prefix + 'auth', 'dhchap', '%s (the host secret) is missing' % secret_key,
                      '%sauth=dhchap needs %s%s (the host secret is missing)' % (prefix, prefix, secret_key))
    if ctrl_secret and not secret:
        raise _refuse(prefix + ctrl_key, None, 'needs %s (bidirectional authentication needs the host secret)' % secret_key,
                      '%s%s needs %s%s' % (prefix, ctrl_key, prefix, secret_key), secret=True)


def check_dhchap_secret(value, option):
    """Validate a DH-HMAC-CHAP secret in the NVMe TP 8006 representation; return it.

    The message never repeats the secret itself.
    """
    if not isinstance(value, str):
        raise _refuse(option, None, 'not a string', secret=True)
    found = _DHCHAP_RE.match(value.strip())
    if not found:
        raise _refuse(option, None, 'not a DH-HMAC-CHAP secret: expected DHHC-1:<00|01|02|03>:<base64>: '
                      '(see nvme gen-dhchap-key)', secret=True)
    try:
        raw = base64.b64decode(found.group('key'), validate=True)
    except (binascii.Error, ValueError):
        raise _refuse(option, None, 'not a DH-HMAC-CHAP secret: the key part is not valid base64',
                      '%s: the key part is not valid base64' % option, secret=True)
    if len(raw) not in (36, 52, 68):
        reason = 'the key is %d bytes; expected 32, 48 or 64 bytes plus a 4-byte CRC' % max(0, len(raw) - 4)
        raise _refuse(option, None, 'not a DH-HMAC-CHAP secret: ' + reason, '%s: %s' % (option, reason), secret=True)
    key, crc = raw[:-4], struct.unpack('<I', raw[-4:])[0]
    if zlib.crc32(key) & 0xffffffff != crc:
        raise _refuse(option, None, 'not a DH-HMAC-CHAP secret: the CRC-32 of the key does not match (mistyped secret?)',
                      '%s: the CRC-32 of the key does not match (mistyped secret?)' % option, secret=True)
    return value.strip()


def kernel_config(option):
    """``'y'``, ``'m'`` or ``'n'`` for a ``CONFIG_*`` option of the running kernel; None when unknown.

    Reads ``/boot/config-<release>`` (Debian, Ubuntu) or ``/proc/config.gz``.
    """
    release = sysfs.kernel_release()
    text = None
    if release:
        text = sysfs.read_attr('/boot/config-%s' % release)
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
