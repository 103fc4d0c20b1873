#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
module: managed_files_apply
short_description: The host side of managed_files - writes, creates and removes every entry that differs in one run
version_added: 0.3.0
description:
  - Called by the M(inferops.node.managed_files) action with the entries its reading found different, so that a run
    that changes several files costs one remote module run instead of two or three per file
    (M(ansible.builtin.copy)'s stat, transfer and write). Playbooks use M(inferops.node.managed_files).
  - Each entry is decided again on the host by the rule the action uses (C(module_utils/common/managed_files.py)); an
    entry that already holds the wanted bytes, mode, owner and group is left alone.
  - A file is written to a temporary file beside it, checked with O(entries[].validate) when given, then moved over
    the old one (one atomic rename, SELinux context kept as M(ansible.builtin.copy) keeps it).
  - Entries are handled in order; the first failure stops the run and names the entry (the ones before it stay done).
options:
  entries:
    description: What the host must hold, in order (a directory before the files in it).
    type: list
    elements: dict
    required: true
    suboptions:
      dest:
        description: Absolute path.
        type: str
        required: true
      state:
        description: C(file), C(directory) or C(absent) (a file, link or directory tree removed when present).
        type: str
        choices: [file, directory, absent]
        default: file
      content_base64:
        description: The file's bytes, base64-encoded (state C(file)).
        type: str
      validate:
        description: A command run on the new file before it replaces the old one; C(%s) is the new file's path.
        type: str
      mode:
        description: Octal mode, as C("0644"). A new file without one gets C(0666) less the umask.
        type: str
      owner:
        description: Owner name.
        type: str
      group:
        description: Group name.
        type: str
attributes:
  check_mode:
    description: Reports what would change, writes nothing.
    support: full
  diff_mode:
    description: No diff; M(inferops.node.managed_files) delegates to M(ansible.builtin.copy) when C(--diff) is asked.
    support: none
  platform:
    description: Any POSIX managed node with Python 3.
    support: full
    platforms: posix
seealso:
  - module: inferops.node.managed_files
author:
  - inferops.node maintainers (@inferops)
'''

EXAMPLES = r'''
- name: Write two files (what inferops.node.managed_files does for its entries that differ)
  inferops.node.managed_files_apply:
    entries:
      - {dest: /etc/inferops, state: directory, mode: "0755"}
      - {dest: /etc/inferops/a.conf, content_base64: "{{ 'a = 1\n' | b64encode }}", mode: "0644"}
'''

RETURN = r'''
files:
  description: Each entry, in order, with whether it changed (or would, in check mode).
  returned: always
  type: list
  elements: dict
  sample: [{dest: /etc/inferops/a.conf, state: file, changed: true}]
'''

import base64
import grp
import hashlib
import os
import pwd
import shutil
import stat
import tempfile

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.inferops.node.plugins.module_utils.common.managed_files import todo


def found(path):
    """The entry as ansible.builtin.find reports it (what managed_files.todo compares), or None when missing."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    item = dict(isreg=stat.S_ISREG(st.st_mode), isdir=stat.S_ISDIR(st.st_mode), mode='%04o' % (st.st_mode & 0o7777))
    try:
        item['pw_name'] = pwd.getpwuid(st.st_uid).pw_name
    except KeyError:
        item['pw_name'] = None
    try:
        item['gr_name'] = grp.getgrgid(st.st_gid).gr_name
    except KeyError:
        item['gr_name'] = None
    if item['isreg']:
        digest = hashlib.sha1()
        with open(path, 'rb') as handle:
            for block in iter(lambda: handle.read(1 << 20), b''):
                digest.update(block)
        item['checksum'] = digest.hexdigest()
    return item


def attributes(module, entry, changed):
    """Mode, owner and group as the entry asks (AnsibleModule's own setters, which report a change)."""
    args = module.load_file_common_arguments(dict(path=entry['dest'], mode=entry['mode'], owner=entry['owner'],
                                                  group=entry['group']))
    return module.set_fs_attributes_if_different(args, changed)


def write(module, entry, data):
    """The bytes into a temporary file beside dest, validated, then renamed over it."""
    directory = os.path.dirname(entry['dest'])
    handle, temp = tempfile.mkstemp(prefix='.%s.' % os.path.basename(entry['dest']), dir=directory)
    try:
        with os.fdopen(handle, 'wb') as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        if entry['validate']:
            if '%s' not in entry['validate']:
                module.fail_json(msg='%s: validate must contain %%s: %s' % (entry['dest'], entry['validate']))
            rc, out, err = module.run_command(entry['validate'] % temp)
            if rc != 0:
                module.fail_json(msg='%s: the new file failed validation (%s, rc=%d): %s'
                                 % (entry['dest'], entry['validate'], rc, (err or out).strip()))
        module.atomic_move(temp, entry['dest'], unsafe_writes=False)
    finally:
        if os.path.exists(temp):
            os.unlink(temp)


def apply(module, entry):
    """Make the host hold the entry; True when something changed (or would)."""
    data = base64.b64decode(entry['content_base64']) if entry['content_base64'] is not None else None
    sha1 = hashlib.sha1(data).hexdigest() if data is not None else None
    item = found(entry['dest'])
    if todo(entry, item, sha1) is None:
        return False
    if module.check_mode:
        return True
    if entry['state'] == 'absent':
        if os.path.isdir(entry['dest']) and not os.path.islink(entry['dest']):
            shutil.rmtree(entry['dest'])
        else:
            os.unlink(entry['dest'])
        return True
    if entry['state'] == 'directory':
        if not os.path.isdir(entry['dest']):
            os.makedirs(entry['dest'])
    elif item is None or item.get('checksum') != sha1:
        write(module, entry, data)
    attributes(module, entry, True)
    return True


def main():
    module = AnsibleModule(
        argument_spec=dict(entries=dict(type='list', elements='dict', required=True, options=dict(
            dest=dict(type='str', required=True),
            state=dict(type='str', default='file', choices=['file', 'directory', 'absent']),
            content_base64=dict(type='str'),
            validate=dict(type='str'),
            mode=dict(type='str'),
            owner=dict(type='str'),
            group=dict(type='str'),
        ))),
        supports_check_mode=True,
    )
    files = []
    for entry in module.params['entries']:
        if not os.path.isabs(entry['dest']):
            module.fail_json(msg='%s: dest must be an absolute path' % entry['dest'], files=files)
        if entry['state'] == 'file' and entry['content_base64'] is None:
            module.fail_json(msg='%s: state file needs content_base64' % entry['dest'], files=files)
        try:
            changed = apply(module, entry)
        except (OSError, ValueError) as exc:
            module.fail_json(msg='%s: %s' % (entry['dest'], exc), files=files)
        files.append(dict(dest=entry['dest'], state=entry['state'], changed=changed))
    module.exit_json(changed=any(item['changed'] for item in files), files=files)


if __name__ == '__main__':
    main()
