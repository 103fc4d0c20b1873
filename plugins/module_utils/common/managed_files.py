# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the managed_files action does to each file: nothing, copy, or file - decided from one reading.

The reading is ansible.builtin.find's `files` list (path, isreg/isdir/islnk, mode as '0644', pw_name,
gr_name, checksum) over the files' parent directories. A file is left alone only when it is a regular file
with the wanted bytes, mode, owner and group; anything else goes to ansible.builtin.copy (state file) or
ansible.builtin.file (directory, absent), which then decide and report as they always do."""

from __future__ import annotations

import os
import re

OCTAL_MODE = re.compile(r'^0?[0-7]{3,4}$')


def input_errors(files):
    """Problems with the entries, each naming the file: relative paths, duplicates, symbolic modes, a file
    without content."""
    problems, seen = [], set()
    for entry in files:
        dest = entry['dest']
        if not os.path.isabs(dest):
            problems.append('%s: dest must be an absolute path' % dest)
        if dest.rstrip('/') in seen:
            problems.append('%s: listed twice' % dest)
        seen.add(dest.rstrip('/'))
        if entry.get('mode') is not None and not OCTAL_MODE.match(str(entry['mode'])):
            problems.append('%s: mode %r must be octal, as "0644"' % (dest, entry['mode']))
        has_data = any(entry.get(key) is not None for key in ('template', 'content', 'src', 'package'))
        if entry.get('state', 'file') == 'file' and not has_data:
            problems.append('%s: a file needs one of template, content, src or package' % dest)
        if entry.get('state', 'file') == 'directory' and has_data:
            problems.append('%s: state directory takes no template, content, src or package' % dest)
    return problems


def found_by_path(found):
    """find's entries by path."""
    return dict((item['path'].rstrip('/'), item) for item in found)


def _same_attributes(entry, item):
    if entry.get('mode') is not None and int(str(entry['mode']), 8) != int(str(item.get('mode', '0')), 8) & 0o7777:
        return False
    if entry.get('owner') is not None and entry['owner'] != item.get('pw_name'):
        return False
    if entry.get('group') is not None and entry['group'] != item.get('gr_name'):
        return False
    return True


def todo(entry, item, sha1):
    """None when the host already has it; 'copy' or 'file' (the module that makes it so) otherwise.

    entry: the wanted file (dest, state, mode, owner, group); item: find's entry for dest or None;
    sha1: the wanted bytes' sha1 (state file)."""
    state = entry.get('state', 'file')
    if state == 'absent':
        return None if item is None else 'file'
    if item is None:
        return 'copy' if state == 'file' else 'file'
    if state == 'directory':
        return None if item.get('isdir') and _same_attributes(entry, item) else 'file'
    if not item.get('isreg') or item.get('checksum') != sha1:
        return 'copy'
    return None if _same_attributes(entry, item) else 'copy'
