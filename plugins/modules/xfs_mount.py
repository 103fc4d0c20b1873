#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
---
module: xfs_mount
short_description: Mount or remount XFS filesystems and record them in fstab - unmounting only on request
version_added: 0.1.0
author:
  - inferops.node maintainers (@inferops)
description:
  - Brings a list of XFS filesystems to their mount points in one call, for hosts that serve from them -
    a mounted filesystem is never unmounted, whatever fails, unless its entry asks for it with
    O(mounts[].state=absent).
  - An unmounted mount point is mounted (C(mount -t xfs -o <opts> <src> <path>); a missing directory is
    created).
  - A mounted one whose live options lack wanted flags that a remount applies (V(noatime), V(nodev),
    V(ro), ...), or whose fstab entry has other options, is remounted with all wanted options
    (C(mount -o remount,<opts> <device> <path>), fstab not merged in). The remount also has the kernel
    check every option before fstab names it. Options only a fresh mount applies (V(logbufs=), V(inode32),
    ...) are reported in RV(mounts[].pending) until the next mount.
  - A mount point holding another filesystem (another source or type) is refused, before any change.
  - A failed mount or remount leaves the filesystem as it was (a failed remount keeps it mounted with
    its previous options) and its fstab entry unchanged; the module fails with the command's error.
  - The fstab entry (C(<src> <path> xfs <opts> 0 0)) is written only after the live mount or remount
    succeeded, so fstab never names options the kernel refused.
  - An entry with O(mounts[].state=absent) is unmounted (C(umount <path>)) when mounted, and its fstab
    entry is removed after the unmount succeeded; a busy filesystem stays mounted and in fstab, and the
    module fails saying so.
  - The options are validated first, with the rule of the filter P(inferops.node.mount_options_errors#filter) -
    empty items, options unknown to XFS (kernel 6.x), the VFS, mount(8) and systemd-fstab-generator,
    conflicts (V(ro) and V(rw), V(noatime) and V(relatime), V(inode32) and V(inode64), ...), malformed values
    (V(logbufs) 2-8, V(logbsize) 16k-256k, ...).
options:
  mounts:
    description:
      - The filesystems, handled in order.
    type: list
    elements: dict
    required: true
    suboptions:
      path:
        description:
          - Absolute mount point, without blanks or a trailing V(/).
        type: path
        required: true
      src:
        description:
          - The filesystem - V(UUID=...), V(LABEL=...), V(PARTUUID=...), V(PARTLABEL=...) or a device path.
            Resolved through C(/dev/disk/by-*) to compare with the mounted source.
          - Required when O(mounts[].state=mounted).
        type: str
      state:
        description:
          - V(mounted) - mounted with O(mounts[].opts) and in fstab; never unmounted.
          - V(absent) - unmounted and removed from fstab (the only way this module unmounts).
        type: str
        choices: [mounted, absent]
        default: mounted
      fstype:
        description:
          - Filesystem type. Only V(xfs), whose options the validation knows.
        type: str
        choices: [xfs]
        default: xfs
      opts:
        description:
          - Comma-separated mount options.
        type: str
        default: defaults
  fstab:
    description:
      - V(present) - write each filesystem's entry to O(fstab_file) after its live mount succeeded.
      - V(ignore) - live mounts only.
    type: str
    choices: [present, ignore]
    default: present
  fstab_file:
    description:
      - The fstab to write. Entries of other mount points are kept as they are.
    type: path
    default: /etc/fstab
attributes:
  check_mode:
    description: Nothing is mounted or written; RV(mounts[].action) and RV(commands) are the predictions.
    support: full
  diff_mode:
    description: The fstab before and after, and the live options before and after.
    support: full
  platform:
    description: Linux with util-linux (C(mount), C(findmnt) with JSON output).
    support: full
    platforms: posix
notes:
  - The only unmount is an entry the caller lists with O(mounts[].state=absent). To move a mount point to
    another filesystem, unmount it first.
  - The commands run with C(LANG=C), so the errors returned are the untranslated ones.
seealso:
  - module: ansible.posix.mount
    description: General mounting; falls back to unmount and mount when a remount fails.
  - name: XFS mount options
    description: The kernel's list.
    link: https://docs.kernel.org/admin-guide/xfs.html
'''

EXAMPLES = r'''
- name: Model and index filesystems, noatime, in fstab
  inferops.node.xfs_mount:
    mounts:
      - path: /data/models
        src: UUID=3f0e7d55-3d8e-4a7b-9d0e-0b4c1c0c2a11
        opts: noatime,nodiratime,attr2,inode64,logbufs=8,logbsize=256k
      - path: /data/index
        src: UUID=8a1c2f40-9a57-4f3d-8c33-5b8f3e4c7d22
        opts: noatime,inode64
  register: mounts

- name: Live only (fstab managed elsewhere)
  inferops.node.xfs_mount:
    mounts:
      - path: /scratch
        src: /dev/md/scratch
    fstab: ignore

- name: Stop using a pool filesystem (unmounted, fstab entry removed)
  inferops.node.xfs_mount:
    mounts:
      - path: /mnt/old-pool
        state: absent
'''

RETURN = r'''
mounts:
  description: One entry per requested filesystem, in request order.
  returned: always
  type: list
  elements: dict
  contains:
    path:
      description: The mount point.
      type: str
      sample: /data/models
    src:
      description: The source as given (null for an O(mounts[].state=absent) entry without one).
      type: str
      sample: UUID=3f0e7d55-3d8e-4a7b-9d0e-0b4c1c0c2a11
    device:
      description: The device the source resolves to (null when it does not exist yet).
      type: str
      sample: /dev/md127
    opts:
      description: The wanted options.
      type: str
      sample: noatime,inode64
    action:
      description: V(mount), V(remount), V(unmount) or V(none) (done, or predicted in check mode).
      type: str
      sample: remount
    reason:
      description: Why the action (not mounted, flags missing, fstab options differ), or null.
      type: str
      sample: "live options lack noatime"
    before:
      description: Live options before (null when not mounted).
      type: list
      elements: str
      sample: [rw, relatime, attr2, inode64, logbufs=8, logbsize=256k, sunit=1024, swidth=4096, noquota]
    after:
      description: Live options after (read back; the prediction in check mode is null).
      type: list
      elements: str
    pending:
      description: Wanted options still absent from the live options, applied at the next mount.
      type: list
      elements: str
      sample: [logbufs=8]
    fstab_changed:
      description: Whether this entry of the fstab was (or would be) written.
      type: bool
    failed:
      description: Whether the mount or remount of this entry failed.
      type: bool
    stderr:
      description: The failed command's error output.
      type: str
commands:
  description: The mount commands run (or, in check mode, that would run), argument lists.
  returned: always
  type: list
  elements: list
  sample: [[mount, -o, "remount,noatime,inode64", /dev/md127, /data/models]]
fstab_file:
  description: The fstab path.
  returned: always
  type: str
  sample: /etc/fstab
fstab_changed:
  description: Whether the fstab was (or would be) changed.
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
  sample: [{argv: [/usr/bin/findmnt, -J, -l, -o, "TARGET,SOURCE,FSTYPE,OPTIONS"], rc: 0, ran: true}]
'''

import os
import re

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.inferops.node.plugins.module_utils.common import sysfs, textfile
from ansible_collections.inferops.node.plugins.module_utils.storage import findmnt
from ansible_collections.inferops.node.plugins.module_utils.common.command import CommandRunner
from ansible_collections.inferops.node.plugins.module_utils.storage.mount_options import compare, option_errors

TAGS = {'UUID': '/dev/disk/by-uuid/', 'LABEL': '/dev/disk/by-label/', 'PARTUUID': '/dev/disk/by-partuuid/',
        'PARTLABEL': '/dev/disk/by-partlabel/'}
SRC = re.compile(r'^((UUID|LABEL|PARTUUID|PARTLABEL)=[^\s]+|/dev/[^\s]+)$')
PATH = re.compile(r'^/[^\s]*[^/\s]$')


def validate(mounts):
    errors = []
    seen = set()
    for index, m in enumerate(mounts):
        name = 'mounts[%d]' % index
        if not PATH.match(m['path']) or m['path'] == '/':
            errors.append('%s.path = %r: must be an absolute path without blanks or a trailing /' % (name, m['path']))
        elif m['path'] in seen:
            errors.append('%s.path = %r: listed twice' % (name, m['path']))
        seen.add(m['path'])
        if m['state'] == 'absent':
            continue
        if m['src'] is None:
            errors.append('%s.src: required with state=mounted (%s)' % (name, m['path']))
        elif not SRC.match(m['src']):
            errors.append('%s.src = %r: must be UUID=..., LABEL=..., PARTUUID=..., PARTLABEL=... or /dev/...'
                          % (name, m['src']))
        for problem in option_errors(m['opts'], fstype=m['fstype']):
            errors.append('%s.opts = %r (%s): %s' % (name, m['opts'], m['path'], problem))
    return errors


def resolve(src):
    """The device path a source names, or None when it does not exist on this host."""
    tag, sep, value = src.partition('=')
    path = TAGS[tag] + value if sep and tag in TAGS else src
    if not sysfs.exists(path):
        return None
    return sysfs.realpath(path)


def read_mounts(runner):
    """Mount point -> (source, fstype, [options]) of the top mount, from findmnt's JSON."""
    entries = findmnt.mount_entries(runner, 'xfs_mount')
    table = {}
    for entry in entries:
        table[entry['target']] = (entry.get('source') or '', entry.get('fstype') or '',
                                  (entry.get('options') or '').split(','))
    return table


def same_source(live_source, device):
    """Whether the mounted source is the wanted device (findmnt names /dev/mdX, /dev/mapper/x, ...)."""
    if device is None:
        return False
    source = live_source.split('[', 1)[0]  # bind mounts show /dev/x[/subdir]
    if source == device:
        return True
    return source.startswith('/dev/') and sysfs.exists(source) and sysfs.realpath(source) == device


def fstab_fields(line):
    fields = line.split()
    if not fields or fields[0].startswith('#') or len(fields) < 2:
        return None
    return fields


def fstab_entry(text, path):
    for line in text.splitlines():
        fields = fstab_fields(line)
        if fields and fields[1].replace('\\040', ' ') == path:
            return fields
    return None


def fstab_update(text, m):
    """fstab ``text`` with the entry of ``m`` (one line, replacing every line of its mount point; none
    when ``m`` is absent)."""
    new = None if m['state'] == 'absent' else '%s %s %s %s 0 0' % (m['src'], m['path'], m['fstype'], m['opts'])
    out, done = [], new is None
    for line in text.splitlines():
        fields = fstab_fields(line)
        if fields and fields[1].replace('\\040', ' ') == m['path']:
            if not done:
                out.append(new)
                done = True
            continue
        out.append(line)
    if not done:
        out.append(new)
    return '\n'.join(out) + '\n' if out else ''


def plan_absent(m, live, fstab_text):
    """The plan of a state=absent entry: unmount when mounted, drop its fstab line when there is one."""
    mounted = m['path'] in live
    plan = {'path': m['path'], 'src': m['src'], 'device': None, 'opts': m['opts'], 'action': 'none', 'reason': None,
            'before': live[m['path']][2] if mounted else None, 'after': None, 'pending': [],
            'fstab_changed': fstab_entry(fstab_text, m['path']) is not None, 'failed': False, 'stderr': ''}
    if mounted:
        plan['action'], plan['reason'] = 'unmount', 'state=absent'
        plan['command'] = ['umount', m['path']]
    return plan


def main():
    module = AnsibleModule(
        argument_spec=dict(
            mounts=dict(type='list', elements='dict', required=True, options=dict(
                path=dict(type='path', required=True),
                src=dict(type='str'),
                state=dict(type='str', choices=['mounted', 'absent'], default='mounted'),
                fstype=dict(type='str', choices=['xfs'], default='xfs'),
                opts=dict(type='str', default='defaults'),
            )),
            fstab=dict(type='str', choices=['present', 'ignore'], default='present'),
            fstab_file=dict(type='path', default='/etc/fstab'),
        ),
        supports_check_mode=True,
    )
    runner = CommandRunner(module)
    params = module.params
    mounts = params['mounts']
    persist = params['fstab'] == 'present'
    fstab_path = params['fstab_file']

    errors = validate(mounts)
    if errors:
        module.fail_json(msg='xfs_mount: invalid input, nothing was changed: %s' % '; '.join(errors), errors=errors)

    live = read_mounts(runner)
    fstab_before = (textfile.read_text(sysfs.host_path(fstab_path)) or '') if persist else ''

    # Plan every entry and refuse foreign filesystems before any change.
    plans, refused = [], []
    for m in mounts:
        if m['state'] == 'absent':
            plans.append(plan_absent(m, live, fstab_before if persist else ''))
            continue
        device = resolve(m['src'])
        entry = fstab_entry(fstab_before, m['path']) if persist else None
        want_fields = [m['src'], m['path'], m['fstype'], m['opts'], '0', '0']
        plan = {'path': m['path'], 'src': m['src'], 'device': device, 'opts': m['opts'], 'action': 'none',
                'reason': None, 'before': None, 'after': None, 'pending': [],
                'fstab_changed': persist and entry != want_fields, 'failed': False, 'stderr': ''}
        if m['path'] in live:
            source, fstype, options = live[m['path']]
            plan['before'] = options
            if fstype != m['fstype'] or not same_source(source, device):
                refused.append('%s holds %s (%s), wanted %s%s (%s): refusing to touch it - a mounted filesystem is never '
                               'replaced; unmount %s by hand or choose another mount point'
                               % (m['path'], source, fstype, m['src'],
                                  (' = %s' % device) if device else ' (not found on this host)', m['fstype'], m['path']))
                continue
            diff = compare(m['opts'], options)
            plan['pending'] = diff['pending']
            fstab_opts_differ = persist and (entry is None or entry[3:4] != [m['opts']])
            if diff['remount']:
                plan['action'], plan['reason'] = 'remount', 'live options lack %s' % ','.join(diff['remount'])
            elif fstab_opts_differ:
                plan['action'] = 'remount'
                plan['reason'] = 'fstab options differ (%s): the kernel checks the options before fstab names them' % (
                    entry[3] if entry else 'no entry')
            plan['command'] = ['mount', '-o', 'remount,' + m['opts'], source.split('[', 1)[0], m['path']]
        else:
            plan['action'], plan['reason'] = 'mount', 'not mounted'
            plan['pending'] = []
            plan['command'] = ['mount', '-t', m['fstype'], '-o', m['opts'], m['src'], m['path']]
        plans.append(plan)
    if refused:
        module.fail_json(msg='xfs_mount: refused, nothing was changed: %s' % '; '.join(refused), refused=refused)

    commands = [p['command'] for p in plans if p['action'] != 'none']
    failures = []
    if not module.check_mode:
        for plan in plans:
            if plan['action'] == 'none':
                continue
            if plan['action'] == 'mount' and not sysfs.isdir(plan['path']):
                if sysfs.exists(plan['path']):
                    plan['failed'], plan['stderr'] = True, '%s exists and is not a directory' % plan['path']
                    failures.append('%s: exists and is not a directory; move it away' % plan['path'])
                    continue
                os.makedirs(sysfs.host_path(plan['path']), 0o755)
            rc, out, err = runner.run(plan['command'], changes=True)
            if rc != 0:
                plan['failed'], plan['stderr'] = True, (err or out).strip()
                if plan['action'] == 'unmount':
                    failures.append(
                        'unmount of %s failed (rc %d: %s); it stays mounted and its fstab entry was not removed; '
                        'stop what uses it (fuser -vm %s) and run again'
                        % (plan['path'], rc, plan['stderr'], plan['path']))
                elif plan['action'] == 'remount':
                    failures.append(
                        'remount of %s with %r failed (rc %d: %s); it stays mounted with its previous options (%s), '
                        'its fstab entry was not changed; fix the options and run again'
                        % (plan['path'], plan['opts'], rc, plan['stderr'], ','.join(plan['before'] or [])))
                else:
                    failures.append(
                        'mount of %s on %s with %r failed (rc %d: %s); it stays unmounted, its fstab entry was not '
                        'changed; fix the options or the source and run again'
                        % (plan['src'], plan['path'], plan['opts'], rc, plan['stderr']))

    # fstab: only the entries whose live mount is as wanted (nothing to do, or done).
    fstab_after = fstab_before
    for plan, m in zip(plans, mounts):
        if persist and not plan['failed']:
            fstab_after = fstab_update(fstab_after, m) if plan['fstab_changed'] else fstab_after
        elif plan['failed']:
            plan['fstab_changed'] = False
    fstab_changed = persist and fstab_after != fstab_before
    if fstab_changed and not module.check_mode:
        textfile.write_text_atomic(module, sysfs.host_path(fstab_path), fstab_after, prefix='.inferops-fstab.')

    if not module.check_mode and commands:
        after = read_mounts(runner)
        for plan, m in zip(plans, mounts):
            if plan['path'] in after:
                plan['after'] = after[plan['path']][2]
                if m['state'] == 'mounted':
                    plan['pending'] = compare(plan['opts'], plan['after'])['pending']
    elif not commands:
        for plan in plans:
            plan['after'] = plan['before']

    changed = bool(commands) or fstab_changed
    result = dict(changed=changed if module.check_mode else (fstab_changed or any(
        p['action'] != 'none' and not p['failed'] for p in plans)),
        mounts=[dict((k, v) for k, v in p.items() if k != 'command') for p in plans],
        commands=commands, fstab_file=fstab_path, fstab_changed=fstab_changed, command_log=runner.log)
    if module._diff:
        live_before = ''.join('%s %s\n' % (p['path'], ','.join(p['before']) if p['before'] else '(not mounted)')
                              for p in plans)
        live_after = ''.join('%s %s\n' % (p['path'], ','.join(p['after']) if p['after'] else (
            '(not mounted)' if p['failed'] or p['action'] == 'none' and not p['before'] else
            '(%s: %s)' % (p['action'], p['opts']))) for p in plans)
        result['diff'] = [dict(before_header=fstab_path, after_header=fstab_path, before=fstab_before,
                               after=fstab_after),
                          dict(before_header='live mounts', after_header='live mounts', before=live_before,
                               after=live_after)]
    pending = [(p['path'], p['pending']) for p in plans if p['pending'] and not p['failed']]
    for path, opts in pending:
        module.warn('%s: %s apply at the next mount (a remount cannot change them); the filesystem was not '
                    'unmounted' % (path, ','.join(opts)))
    if failures:
        module.fail_json(msg='xfs_mount: %s' % '; '.join(failures), **result)
    module.exit_json(**result)


if __name__ == '__main__':
    main()
