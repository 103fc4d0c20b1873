# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Mount options of an XFS filesystem: the one rule for what is valid, and what a remount applies.

* ``option_errors(opts, fstype='xfs')`` - list of problems (empty = valid): empty items, options that
  neither XFS (kernel 6.x) nor the VFS, mount(8) or systemd-fstab-generator know, conflicting options,
  malformed values. Each message names the option and says how to fix it.
* ``compare(opts, live_options)`` - what of ``opts`` is missing from a live mount's options:
  ``missing`` (all), ``remount`` (VFS flags a remount applies), ``pending`` (applied at the next mount).

Used by the module ``xfs_mount`` (on the target) and by the filter ``mount_options_errors`` (the roles'
validation on the controller), so both refuse exactly the same values.
"""

from __future__ import annotations

import re

__all__ = ['FSTYPES', 'HIDDEN', 'REMOUNT_FLAGS', 'compare', 'option_errors', 'split_options']

FSTYPES = ('xfs',)

# Flags of the VFS (and mount(8) spellings of them): no value.
GENERIC_FLAGS = frozenset([
    'defaults', 'ro', 'rw', 'atime', 'noatime', 'relatime', 'norelatime', 'strictatime', 'nostrictatime',
    'diratime', 'nodiratime', 'lazytime', 'nolazytime', 'dev', 'nodev', 'suid', 'nosuid', 'exec', 'noexec',
    'sync', 'async', 'dirsync', 'iversion', 'noiversion', 'symfollow', 'nosymfollow', 'silent', 'loud',
    'auto', 'noauto', 'nofail', '_netdev', 'user', 'nouser', 'users', 'owner', 'group', 'seclabel',
])
# SELinux contexts (value required).
SELINUX_VALUED = frozenset(['context', 'fscontext', 'defcontext', 'rootcontext'])
# systemd-fstab-generator's x-systemd.* options (systemd.mount(5)); True = takes a value.
SYSTEMD = {
    'x-systemd.automount': False, 'x-systemd.makefs': False, 'x-systemd.growfs': False,
    'x-systemd.pcrfs': False, 'x-systemd.rw-only': False, 'x-systemd.device-bound': None,
    'x-systemd.requires': True, 'x-systemd.before': True, 'x-systemd.after': True,
    'x-systemd.wanted-by': True, 'x-systemd.required-by': True, 'x-systemd.requires-mounts-for': True,
    'x-systemd.wants-mounts-for': True, 'x-systemd.device-timeout': True, 'x-systemd.idle-timeout': True,
    'x-systemd.mount-timeout': True,
}
# XFS (fs/xfs/xfs_super.c, kernel 6.x) options without a value.
XFS_FLAGS = frozenset([
    'wsync', 'noalign', 'swalloc', 'nouuid', 'grpid', 'bsdgroups', 'nogrpid', 'sysvgroups', 'norecovery',
    'inode64', 'inode32', 'ikeep', 'noikeep', 'largeio', 'nolargeio', 'attr2', 'noattr2', 'filestreams',
    'quota', 'noquota', 'usrquota', 'grpquota', 'prjquota', 'uquota', 'gquota', 'pquota', 'uqnoenforce',
    'gqnoenforce', 'pqnoenforce', 'qnoenforce', 'discard', 'nodiscard', 'dax',
])
XFS_VALUED = frozenset(['logbufs', 'logbsize', 'logdev', 'rtdev', 'allocsize', 'sunit', 'swidth', 'dax'])
QUOTA = frozenset(['quota', 'usrquota', 'grpquota', 'prjquota', 'uquota', 'gquota', 'pquota', 'uqnoenforce',
                   'gqnoenforce', 'pqnoenforce', 'qnoenforce'])
# Options the kernel no longer knows: the fix to suggest.
REMOVED = {
    'barrier': 'removed from XFS in kernel 4.19 (barriers are always on); remove it',
    'nobarrier': 'removed from XFS in kernel 4.19 (barriers are always on); remove it',
    'ihashsize': 'removed from XFS; remove it',
    'osyncisdsync': 'removed from XFS; remove it',
    'osyncisosync': 'removed from XFS; remove it',
    'irixsgid': 'removed from XFS; remove it',
    'nodelaylog': 'removed from XFS; remove it',
    'delaylog': 'removed from XFS (always on); remove it',
    'mand': 'mandatory locking was removed from Linux 5.15; remove it',
    'nomand': 'mandatory locking was removed from Linux 5.15; remove it',
    'remount': 'not a filesystem option (the module remounts when needed); remove it',
    'bind': 'bind mounts are not managed here; remove it',
    'rbind': 'bind mounts are not managed here; remove it',
}
# Mutually exclusive groups: at most one member (aliases of one another count as the same choice).
EXCLUSIVE = [
    ('ro', 'rw'),
    ('noatime', 'relatime', 'strictatime'),
    ('atime', 'noatime'),
    ('relatime', 'norelatime'),
    ('strictatime', 'nostrictatime'),
    ('diratime', 'nodiratime'),
    ('lazytime', 'nolazytime'),
    ('dev', 'nodev'),
    ('suid', 'nosuid'),
    ('exec', 'noexec'),
    ('sync', 'async'),
    ('iversion', 'noiversion'),
    ('symfollow', 'nosymfollow'),
    ('silent', 'loud'),
    ('auto', 'noauto'),
    ('user', 'nouser'),
    ('inode32', 'inode64'),
    ('discard', 'nodiscard'),
    ('ikeep', 'noikeep'),
    ('largeio', 'nolargeio'),
    ('attr2', 'noattr2'),
    (('grpid', 'bsdgroups'), ('nogrpid', 'sysvgroups')),
]
# VFS flags a remount changes (the others apply at mount time only, or never show in the options).
REMOUNT_FLAGS = frozenset(['ro', 'rw', 'noatime', 'atime', 'relatime', 'strictatime', 'nodiratime', 'diratime',
                           'nosuid', 'suid', 'nodev', 'dev', 'noexec', 'exec', 'lazytime', 'nolazytime',
                           'nosymfollow', 'symfollow', 'sync', 'async', 'dirsync'])
# Options that never show in the live options (mount(8)/systemd only, or defaults).
HIDDEN = frozenset(['defaults', 'auto', 'noauto', 'nofail', 'user', 'nouser', 'users', '_netdev', 'owner',
                    'group', 'async', 'atime', 'diratime', 'dev', 'suid', 'exec', 'symfollow', 'loud',
                    'norelatime', 'nostrictatime', 'nolazytime', 'noiversion', 'silent'])
LOGBSIZES = (16384, 32768, 65536, 131072, 262144)
SAFE_VALUE = re.compile(r'^[^\s,"\'#\\]+$')
SIZE = re.compile(r'^([0-9]+)([kKmMgG]?)$')
UNITS = {'': 1, 'k': 1024, 'm': 1024 ** 2, 'g': 1024 ** 3}


def split_options(opts):
    """'a,b=1' -> ['a', 'b=1'] (no validation; empty items kept as '')."""
    return opts.split(',') if opts else []


def _size(value):
    match = SIZE.match(value)
    if not match:
        return None
    return int(match.group(1)) * UNITS[match.group(2).lower()]


def _int(value):
    return int(value) if re.match(r'^[0-9]+$', value) else None


def _value_error(name, value):
    """Problem with the value of XFS option ``name`` (None = fine)."""
    if name == 'logbufs':
        number = _int(value)
        if number is None or not 2 <= number <= 8:
            return 'must be an integer from 2 to 8 (in-memory log buffers), e.g. logbufs=8'
    elif name == 'logbsize':
        size = _size(value)
        if size not in LOGBSIZES:
            return 'must be 16k, 32k, 64k, 128k or 256k (log buffer size, a power of two), e.g. logbsize=256k'
    elif name == 'allocsize':
        size = _size(value)
        if size is None or size < 4096 or size > 1024 ** 3 or size & (size - 1):
            return 'must be a power of two from 4k to 1g (e.g. allocsize=64m)'
    elif name in ('sunit', 'swidth'):
        if _int(value) is None:
            return 'must be a non-negative integer in 512-byte units, e.g. sunit=1024,swidth=4096'
    elif name in ('logdev', 'rtdev'):
        if not value.startswith('/'):
            return 'must be an absolute device path, e.g. %s=/dev/disk/by-id/...' % name
    elif name == 'dax':
        if value not in ('always', 'never', 'inode'):
            return 'must be always, never or inode (or plain dax = dax=always)'
    return None


def _classify(item):
    """(canonical key for duplicates, problem or None) of one option."""
    name, sep, value = item.partition('=')
    if item in REMOVED or name in REMOVED:
        return name, '%s: %s' % (item, REMOVED.get(item, REMOVED.get(name)))
    if name.startswith('x-systemd.'):
        if name not in SYSTEMD:
            return name, '%s: systemd-fstab-generator does not know %s (known: %s)' % (
                item, name, ', '.join(sorted(SYSTEMD)))
        takes = SYSTEMD[name]
        if takes is True and not (sep and value):
            return name, '%s: %s needs a value (%s=...)' % (item, name, name)
        if takes is False and sep:
            return name, '%s: %s takes no value; write %s' % (item, name, name)
        return name, None
    if name.startswith('x-') and len(name) > 2:
        return item, None
    if name == 'comment':
        return item, None if sep else '%s: comment needs a value (comment=...)' % item
    if sep and value and not SAFE_VALUE.match(value):
        return name, '%s: the value holds a blank, quote, comma, # or backslash; mount(8) would split it' % item
    if name in SELINUX_VALUED:
        return name, None if (sep and value) else '%s: %s needs an SELinux context (%s=user:role:type:level)' % (
            item, name, name)
    if name in XFS_VALUED and sep:
        if not value:
            return name, '%s: empty value' % item
        problem = _value_error(name, value)
        return name, ('%s: %s' % (item, problem)) if problem else None
    if name in XFS_VALUED and name not in XFS_FLAGS:
        return name, '%s: needs a value (%s=...)' % (item, name)
    if name in GENERIC_FLAGS or name in XFS_FLAGS:
        if sep:
            return name, '%s: %s takes no value; write %s' % (item, name, name)
        return name, None
    return name, ('%s: unknown option (neither XFS, the VFS, mount(8) nor systemd know it); check the spelling '
                  'or remove it' % item)


def option_errors(opts, fstype='xfs'):
    """Problems of the mount option string ``opts`` (list of messages; empty = valid)."""
    if fstype not in FSTYPES:
        return ['fstype %r: only %s options are known' % (fstype, ', '.join(FSTYPES))]
    if not isinstance(opts, str):
        return ['must be a string of comma-separated options, got %r' % (opts,)]
    if opts == '':
        return ['empty; write defaults for the default options']
    errors = []
    items = opts.split(',')
    if any(item == '' for item in items):
        errors.append('empty item (leading, trailing or doubled comma) in %r; remove the extra comma' % opts)
    seen = {}
    names = set()
    for item in items:
        if item == '':
            continue
        if re.search(r'\s', item):
            errors.append('%r: holds a blank; options are separated by commas only' % item)
            continue
        key, problem = _classify(item)
        if problem:
            errors.append(problem)
            continue
        if key in seen:
            if seen[key] == item:
                errors.append('%s: listed twice; remove one' % item)
            else:
                errors.append('%s and %s: conflicting values; keep one' % (seen[key], item))
            continue
        seen[key] = item
        names.add(key if '=' not in item else item.partition('=')[0])
    for group in EXCLUSIVE:
        present = []
        for choice in group:
            aliases = choice if isinstance(choice, tuple) else (choice,)
            found = [a for a in aliases if a in names]
            if found:
                present.append('/'.join(found))
        if len(present) > 1:
            errors.append('%s: conflicting options; keep one' % ' and '.join(present))
    quotas = sorted(QUOTA & names)
    if 'noquota' in names and quotas:
        errors.append('noquota and %s: conflicting options; keep noquota or the quota options' % ', '.join(quotas))
    dax = [item for item in seen.values() if item == 'dax' or item.startswith('dax=')]
    if len(dax) > 1:
        errors.append('%s: conflicting options; keep one' % ' and '.join(dax))
    if ('sunit' in names) != ('swidth' in names):
        errors.append('sunit and swidth must be given together (or neither: the values from mkfs.xfs apply)')
    elif 'sunit' in names:
        sunit, swidth = _int(seen['sunit'].partition('=')[2]), _int(seen['swidth'].partition('=')[2])
        if sunit is not None and swidth is not None:
            if sunit == 0 and swidth != 0 or sunit != 0 and swidth % sunit:
                errors.append('sunit=%d,swidth=%d: swidth must be a multiple of sunit' % (sunit, swidth))
        if 'noalign' in names:
            errors.append('noalign and sunit/swidth: conflicting options; keep one')
    if 'norecovery' in names and 'ro' not in names:
        errors.append('norecovery: XFS mounts without log recovery only read-only; add ro or remove norecovery')
    return errors


def compare(opts, live_options):
    """What of the wanted ``opts`` the live options lack.

    ``missing`` - every wanted option that shows in the live options when set but is not there;
    ``remount`` - those a remount applies (VFS flags); ``pending`` - the rest, applied at the next mount.
    """
    live = set(live_options or [])
    wanted = [o for o in split_options(opts) if o and o not in HIDDEN and not o.startswith('x-')
              and not o.startswith('comment=')]
    missing = [o for o in wanted if o not in live]
    return {
        'missing': missing,
        'remount': [o for o in missing if o in REMOUNT_FLAGS],
        'pending': [o for o in missing if o not in REMOUNT_FLAGS],
    }
