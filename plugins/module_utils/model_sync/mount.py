# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Is a model repository on a filesystem of its own, or would a sync fill the root filesystem?

On a serving node the destination is the models array's mount point. When the array is not mounted
(assembly failed at boot and fstab says ``nofail``, an operator's ``umount``) the empty mount-point
directory is still there, on the root filesystem: a sync would write hundreds of GB of weights into it
and take the node down. The rule: the destination, or one of its ancestors below ``/``, must be a mount
point - so what the sync writes lands on some filesystem other than the one mounted on ``/``.

Why the mount table (``/proc/self/mountinfo``) and not ``st_dev`` or ``os.path.ismount``: a bind mount of
a root-filesystem directory is a mount point of its own (the operator chose it), yet it has ``/``'s
``st_dev`` and ``os.path.ismount`` says False for it (same device, different inode than its parent).
The table names every mount, bind mounts too, and says which filesystem the path lands on (source and
type, for the refusal) - and a pure function over its text is tested on recorded tables.

* ``parse_mountinfo(text)`` - the table's entries, in the kernel's order;
* ``mount_of(path, mounts)`` - the entry a resolved absolute path lands on;
* ``mount_problem(path, mounts)`` - None, or the refusal naming the destination, the filesystem and the fix.
* ``staging_problem(staging, destination, mounts)`` - None, or the refusal of a O(staging_dir) that is not on
  the destination's mount: files are renamed and hard-linked from it into place, and rename(2) and link(2)
  work only within one mount (EXDEV across filesystems, and across two mounts of one filesystem too).
"""

from __future__ import annotations

import os

from ansible_collections.inferops.node.plugins.module_utils.storage.findmnt import unescape

__all__ = ['MOUNTINFO', 'mount_of', 'mount_problem', 'parse_mountinfo', 'staging_problem']

MOUNTINFO = '/proc/self/mountinfo'


def parse_mountinfo(text):
    """Entries ``{id, parent, root, mount_point, fstype, source}`` of a ``/proc/<pid>/mountinfo`` text.

    Fields (proc(5)): id parent major:minor root mount-point options [optional fields...] - fstype source
    super-options. Lines that do not have that shape are skipped.
    """
    mounts = []
    for line in text.splitlines():
        fields = line.split(' ')
        # The optional fields end at the first lone '-', after the six fixed ones.
        tail = fields[fields.index('-', 6) + 1:] if '-' in fields[6:] else []
        if len(tail) < 2:
            continue
        mounts.append({'id': fields[0], 'parent': fields[1], 'root': unescape(fields[3]),
                       'mount_point': unescape(fields[4]), 'fstype': tail[0], 'source': unescape(tail[1])})
    return mounts


def _top(mount, children):
    """The mount seen at mount's point: a mount stacked on the same point has the one below as parent."""
    while True:
        over = [m for m in children.get(mount['id'], []) if m['mount_point'] == mount['mount_point']]
        if not over:
            return mount
        mount = over[-1]


def mount_of(path, mounts):
    """The entry ``path`` (absolute, symlinks resolved) lands on, or None for a table without ``/``.

    Walks the tree from ``/`` one path component at a time, as the kernel's lookup does: a mount on
    ``/data`` made after one on ``/data/models`` hides it, and only the top of a stack counts.
    """
    ids = set(m['id'] for m in mounts)
    roots = [m for m in mounts if m['mount_point'] == '/' and m['parent'] not in ids] or \
        [m for m in mounts if m['mount_point'] == '/']
    if not roots:
        return None
    children = {}
    for entry in mounts:
        children.setdefault(entry['parent'], []).append(entry)
    current = _top(roots[0], children)
    prefix = ''
    for part in [p for p in path.split('/') if p]:
        prefix += '/' + part
        below = [m for m in children.get(current['id'], []) if m['mount_point'] == prefix]
        if below:
            current = _top(below[-1], children)
    return current


def mount_problem(path, mounts):
    """None when ``path`` is on a mount of its own (it or an ancestor below ``/`` is a mount point), else why not.

    ``path`` must be absolute with symlinks resolved (``os.path.realpath``): a symlink into a mounted
    array is fine, and what counts is where the files would be written.
    """
    mount = mount_of(path, mounts)
    if mount is None:
        return ('destination %s: the mount table lists no root filesystem, so whether the models array is '
                'mounted cannot be told. Nothing was changed; set require_mount=false to sync anyway.' % path)
    if mount['mount_point'] != '/':
        return None
    return ('destination %s is not a mount point and no directory above it is (below /): it is on the root '
            'filesystem (%s, %s, mounted on /), which a sync would fill. Is the models array mounted? Mount it '
            'on %s (run md_raid_xfs first; `findmnt %s` and the array\'s fstab entry - with nofail a failed '
            'mount at boot leaves the empty directory), or set require_mount=false (model_sync_require_mount '
            'in the role) if writing the models to the root filesystem is intended. Nothing was changed.'
            % (path, mount['source'], mount['fstype'], path, path))


def _existing(path):
    """``path`` or its nearest ancestor that exists, symlinks resolved: where a directory made there lands."""
    path = os.path.abspath(path)
    while not os.path.exists(path) and os.path.dirname(path) != path:
        path = os.path.dirname(path)
    return os.path.realpath(path)


def _describe(path, mount):
    if mount:
        return '%s (%s, mounted on %s)' % (mount['source'], mount['fstype'], mount['mount_point'])
    dev = os.stat(path).st_dev
    return 'device %d:%d' % (os.major(dev), os.minor(dev))


def staging_problem(staging, destination, mounts=None):
    """None when the staging area ``staging`` (made if missing) lands on the mount of ``destination``, else the
    refusal naming the option, its value, both filesystems and the fix.

    ``st_dev`` tells two filesystems apart; the mount table (``mounts``, ``parse_mountinfo``'s entries, None
    when it could not be read) also tells two mounts of one filesystem apart (a bind mount), which rename(2)
    refuses as well.
    """
    where = _existing(staging)
    dest = os.path.realpath(destination)
    same_fs = os.stat(where).st_dev == os.stat(dest).st_dev
    staging_mount = mount_of(where, mounts) if mounts else None
    dest_mount = mount_of(dest, mounts) if mounts else None
    if same_fs and (staging_mount is None or dest_mount is None or staging_mount['id'] == dest_mount['id']):
        return None
    return ('staging_dir = %s is not on the filesystem of destination %s: it would be on %s, the destination is on '
            '%s%s. Files are downloaded into the staging area, then renamed and hard-linked into place, which '
            'works (atomically) only within one mounted filesystem. Set staging_dir to a directory on the '
            'destination\'s filesystem (the one mounted on %s), or leave it unset for the default %s. Nothing was changed.'
            % (staging, destination, _describe(where, staging_mount), _describe(dest, dest_mount),
               '' if not same_fs else ' (another mount of the same filesystem)',
               (dest_mount or {}).get('mount_point') or destination, os.path.join(destination, '.inferops-model-sync')))
