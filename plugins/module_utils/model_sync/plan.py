# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a model sync has to do, decided before anything is downloaded or written.

The staging area (``<destination>/.inferops-model-sync`` by default, same filesystem so renames are
atomic) is content-addressed:

* ``objects/<sha256>`` - a downloaded file whose sha256 was verified (kept until placed: resume);
* ``parts/<sha256>.part`` + ``parts/<sha256>.journal`` - a file being downloaded; the journal's first
  line is JSON ``{size, part_size, etag}``, then one line per part written and flushed to disk;
* ``build/<model>`` - the next tree of a model (hard links), swapped with the live directory;
* ``trash/`` - old trees on their way out; ``replaced/`` - trees of directories model_sync did not make
  (``replace_unmanaged``), kept for the operator.

The area is removed when it holds nothing (after every run without failures), so Triton's view of the
repository is the models alone. One sync at a time: a lock in /run/lock, not in the repository.

* ``plan_model(...)`` - per model: ``current`` (marker records this manifest digest and every file is
  there with its size: nothing is read) or ``sync`` with a source per file (``live`` = reuse the
  placed file, ``staged`` = verified earlier, ``partial`` = resume, ``download``).
* ``space_problem(plans, free, reserve)`` - refusal message naming each model and the shortfall.
"""

from __future__ import annotations

import json
import os

from ansible_collections.inferops.node.plugins.module_utils.model_sync.manifest import (
    MARKER_FORMAT,
    MARKER_NAME,
    file_sha256,
)

__all__ = ['Staging', 'human', 'plan_model', 'read_marker', 'space_problem']


def human(size):
    size = float(size)
    for unit in ('B', 'KiB', 'MiB', 'GiB', 'TiB'):
        if abs(size) < 1024 or unit == 'TiB':
            return ('%d %s' % (size, unit)) if unit == 'B' else '%.1f %s' % (size, unit)
        size /= 1024.0
    return '%d B' % size  # pragma: no cover


class Staging(object):
    """Paths of the staging area (nothing is created until ``create``)."""

    def __init__(self, root):
        self.root = root
        self.objects = os.path.join(root, 'objects')
        self.parts = os.path.join(root, 'parts')
        self.build = os.path.join(root, 'build')
        self.trash = os.path.join(root, 'trash')
        self.replaced = os.path.join(root, 'replaced')

    def tidy(self):
        """Remove the staging area when it holds nothing to resume and no replaced tree: a Triton polling
        the repository then never meets it."""
        for path in (self.objects, self.parts, self.build, self.trash):
            try:
                if not os.listdir(path):
                    os.rmdir(path)
            except OSError:
                pass
        try:
            os.rmdir(self.root)
        except OSError:
            pass  # not empty: resume data or replaced trees

    def create(self):
        for path in (self.objects, self.parts, self.build, self.trash):
            os.makedirs(path, mode=0o755, exist_ok=True)

    def object_path(self, sha):
        return os.path.join(self.objects, sha)

    def part_path(self, sha):
        return os.path.join(self.parts, sha + '.part')

    def journal_path(self, sha):
        return os.path.join(self.parts, sha + '.journal')

    def read_journal(self, sha):
        """(header dict, set of part indices done) or (None, set())."""
        try:
            with open(self.journal_path(sha), 'r') as handle:
                lines = handle.read().split('\n')
        except (IOError, OSError):
            return None, set()
        try:
            header = json.loads(lines[0])
        except ValueError:
            return None, set()
        done = set()
        # Only complete lines count: the last one may be cut by the interruption.
        for line in lines[1:-1]:
            if line.isdigit():
                done.add(int(line))
        if not os.path.exists(self.part_path(sha)):
            return None, set()
        return header, done


def read_marker(model_dir):
    """The marker model_sync wrote into a model directory, or None (absent or unreadable)."""
    try:
        with open(os.path.join(model_dir, MARKER_NAME), 'r') as handle:
            marker = json.load(handle)
    except (IOError, OSError, ValueError):
        return None
    if not isinstance(marker, dict) or marker.get('format') != MARKER_FORMAT or not isinstance(marker.get('files'), list):
        return None
    return marker


def partial_bytes(header, done, size, part_size):
    """Bytes already downloaded for a file whose journal matches size and part size."""
    if not header or header.get('size') != size or header.get('part_size') != part_size:
        return 0
    count = max((size + part_size - 1) // part_size, 1)
    total = 0
    for index in done:
        if 0 <= index < count:
            total += min(part_size, size - index * part_size)
    return total


def _live_matches(live_dir, entry, old, verify_existing):
    """The placed file can be reused: the marker recorded the same digest and the size still matches."""
    if old is None or old.get('sha256') != entry['sha256'] or old.get('size') != entry['size']:
        return False
    path = os.path.join(live_dir, entry['path'])
    try:
        if os.path.islink(path) or os.path.getsize(path) != entry['size']:
            return False
    except OSError:
        return False
    return not verify_existing or file_sha256(path) == entry['sha256']


def plan_model(entry, manifest, digest, live_dir, staging, part_size, verify_existing=False):
    """Plan one model (``entry`` from normalize_models); see the module docstring for the result."""
    marker = read_marker(live_dir) if os.path.isdir(live_dir) else None
    exists = os.path.lexists(live_dir)
    plan = {'name': entry['name'], 'version': entry['version'], 'bucket': entry['bucket'], 'prefix': entry['prefix'],
            'manifest_sha256': digest, 'live_dir': live_dir, 'exists': exists, 'managed': marker is not None,
            'marker': marker, 'files': [], 'bytes': 0, 'bytes_to_download': 0, 'bytes_reused': 0,
            'bytes_staged': 0}
    old_files = {f.get('path'): f for f in (marker or {}).get('files', []) if isinstance(f, dict)}
    current = marker is not None and marker.get('manifest_sha256') == digest
    for item in manifest['files']:
        size, sha = item['size'], item['sha256']
        plan['bytes'] += size
        row = {'path': item['path'], 'size': size, 'sha256': sha, 'key': _key(entry['prefix'], item['path'])}
        if _live_matches(live_dir, item, old_files.get(item['path']), verify_existing):
            row['source'] = 'live'
            plan['bytes_reused'] += size
        else:
            current = False
            if os.path.isfile(staging.object_path(sha)) and os.path.getsize(staging.object_path(sha)) == size:
                row['source'] = 'staged'
                plan['bytes_staged'] += size
            else:
                header, done = staging.read_journal(sha)
                have = partial_bytes(header, done, size, part_size)
                row['source'] = 'partial' if have else 'download'
                row['have'] = have
                plan['bytes_staged'] += have
                plan['bytes_to_download'] += size - have
        plan['files'].append(row)
    if current and set(old_files) != set(row['path'] for row in plan['files']):
        current = False
    plan['action'] = 'current' if current else 'sync'
    if not current and exists and marker is None:
        plan['action'] = 'unmanaged'
    return plan


def _key(prefix, path):
    return '%s/%s' % (prefix, path) if prefix else path


def space_problem(plans, destination, free, reserve):
    """None, or why the sync must not start: each model's need, the free space and the shortfall.

    A file is downloaded once even when several models list the same content (same sha256).
    """
    seen = set()
    needs = []
    for plan in plans:
        need = 0
        for row in plan['files']:
            if row['source'] in ('download', 'partial') and row['sha256'] not in seen:
                seen.add(row['sha256'])
                need += row['size'] - row.get('have', 0)
        if need:
            needs.append((plan, need))
    total = sum(need for _plan, need in needs)
    usable = free - reserve
    if total <= usable:
        return None
    models = ', '.join('%s (version %s) needs %s (%d bytes)' % (plan['name'], plan['version'], human(need), need)
                       for plan, need in needs)
    return ('not enough free space in %s: %s; free %s minus min_free %s leaves %s, short by %s (%d bytes). '
            'Nothing was downloaded. Free space, lower min_free, or sync fewer models at a time.'
            % (destination, models, human(free), human(reserve), human(max(usable, 0)), human(total - usable),
               total - usable))
