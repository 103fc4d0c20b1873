# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A mounted XFS filesystem's geometry (``xfs_info <mount point>``) and space (``findmnt -b``).

``xfs_info`` has no JSON output: its text is five sections (meta-data, data, naming, log, realtime)
of ``key=value`` fields, a section's continuation lines starting with ``=``. ``parse_xfs_info`` keeps
them as they are, by section (the same key, ``bsize`` or ``sunit``, appears in several);
``geometry`` picks what a model filesystem is judged by.
"""

from __future__ import annotations

import json
import re

__all__ = ['parse_xfs_info', 'geometry', 'xfs_info_argv', 'space_argv', 'parse_space']

SECTIONS = ('meta-data', 'data', 'naming', 'log', 'realtime')
_SECTION_RE = re.compile(r'^(%s)\s*=\s*(.*)$' % '|'.join(re.escape(s) for s in SECTIONS))
_FIELD_RE = re.compile(r'([A-Za-z][\w-]*)=(\S+?)(?:,|\s|$)')


def _value(text):
    return int(text) if text.isdigit() else text


def parse_xfs_info(text):
    """``{section: {key: value}}``; a section's unnamed head (``/dev/md127``, ``version 2``,
    ``internal log``, ``none``) is its ``name``. Integers as int."""
    sections, current = {}, None
    for line in text.splitlines():
        match = _SECTION_RE.match(line)
        if match:
            current = sections.setdefault(match.group(1), {})
            rest = match.group(2)
            # The head ends where the first key=value starts: "version 2              bsize=4096"
            # (the last word before the first "=" is that key); "data     =          bsize=4096" has none.
            words = rest.split('=', 1)[0].split() if '=' in rest else rest.split()
            name = ' '.join(words[:-1] if '=' in rest else words)
            if name:
                current['name'] = name
        elif current is not None and line.strip().startswith('='):
            rest = line.strip()[1:]
        else:
            continue
        for key, value in _FIELD_RE.findall(rest):
            current[key] = _value(value)
    return sections


def geometry(sections):
    """What a model filesystem is judged by: block size, stripe unit and width in bytes (0 without a
    stripe), ftype (1: the directory entries carry the file type), crc, reflink, allocation groups."""
    data, naming, meta = sections.get('data', {}), sections.get('naming', {}), sections.get('meta-data', {})
    bsize = data.get('bsize')

    def in_bytes(blocks):
        return blocks * bsize if isinstance(blocks, int) and isinstance(bsize, int) else None

    return {
        'block_size': bsize,
        'sunit_bytes': in_bytes(data.get('sunit')),
        'swidth_bytes': in_bytes(data.get('swidth')),
        'ftype': naming.get('ftype'),
        'crc': meta.get('crc'),
        'reflink': meta.get('reflink'),
        'agcount': meta.get('agcount'),
    }


def xfs_info_argv(mount):
    return ['xfs_info', mount]


def space_argv(mount):
    """Size and free space of the filesystem mounted at ``mount`` (bytes, JSON)."""
    return ['findmnt', '-J', '-b', '-o', 'TARGET,SIZE,AVAIL,USED', '--mountpoint', mount]


def parse_space(text):
    """``{'size_bytes', 'avail_bytes', 'used_bytes'}`` of findmnt's JSON for one mount point."""
    entry = json.loads(text)['filesystems'][0]
    return {'size_bytes': int(entry['size']), 'avail_bytes': int(entry['avail']), 'used_bytes': int(entry['used'])}
