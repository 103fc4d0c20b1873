# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A Triton model repository on disk, read once: its models, their configs and versions, and the layout rules.

* ``read_repository(path)`` - what module ``triton_repository_info`` returns: whether the path is a
  directory, and per model (a visible directory at the top) its ``config.pbtxt``, its numeric version
  directories, its ``platform``/``backend``, whether ONNX Runtime runs it, and the thread parameters its
  config sets outside a block that this collection manages.
* ``layout_problems(info)`` - what keeps Triton from loading the repository as a whole (Triton's
  ``--strict-model-config`` layout: every model has a ``config.pbtxt`` and a numeric version directory),
  in words that follow the repository's variable (``... = "/data/models": <problem>``).

Symbolic links are followed as Triton follows them (a model directory may be a link onto another
filesystem). Standard library and ``textfile`` only.
"""

from __future__ import annotations

import os
import re

from ansible_collections.inferops.node.plugins.module_utils.common.textfile import read_text

__all__ = ['read_repository', 'layout_problems', 'onnx_runtime', 'thread_parameters_outside_blocks']

CONFIG = 'config.pbtxt'
THREAD_PARAMETERS = ('intra_op_thread_count', 'inter_op_thread_count')

# Top-level fields of a model config in protobuf text format; a nested message (an input's
# ``data_type``, a parameter's ``key``) is indented or inside braces on the same line.
_FIELD = re.compile(r'^\s*(platform|backend)\s*:\s*"([^"]*)"', re.MULTILINE)
# The blocks this collection writes into a config (ansible.builtin.blockinfile markers
# "# BEGIN inferops.node <role>: <what>" ... "# END inferops.node <role>: <what>").
_MANAGED_BLOCK = re.compile(r'^# BEGIN inferops\.node [^\n]*\n.*?^# END inferops\.node [^\n]*$',
                            re.MULTILINE | re.DOTALL)


def _visible_entries(path):
    try:
        names = sorted(os.listdir(path))
    except OSError:
        return []
    return [(name, os.path.join(path, name)) for name in names if not name.startswith('.')]


def _fields(config_text):
    return dict(_FIELD.findall(config_text or ''))


def _runs_on_onnx(fields):
    return fields.get('platform') == 'onnxruntime_onnx' or fields.get('backend') == 'onnxruntime'


def onnx_runtime(config_text):
    """Whether a config's model runs on ONNX Runtime: platform onnxruntime_onnx or backend onnxruntime."""
    return _runs_on_onnx(_fields(config_text))


def thread_parameters_outside_blocks(config_text):
    """ONNX Runtime thread parameters that a config names outside this collection's managed blocks."""
    outside = _MANAGED_BLOCK.sub('', config_text or '')
    return [name for name in THREAD_PARAMETERS if name in outside]


def _model(name, path):
    config_path = os.path.join(path, CONFIG)
    text = read_text(config_path) if os.path.isfile(config_path) else None
    fields = _fields(text)
    versions = sorted(int(entry) for entry, entry_path in _visible_entries(path)
                      if entry.isdigit() and os.path.isdir(entry_path))
    return {
        'name': name,
        'path': path,
        'config': config_path if text is not None else None,
        'versions': versions,
        'platform': fields.get('platform'),
        'backend': fields.get('backend'),
        'onnx_runtime': _runs_on_onnx(fields),
        'thread_parameters_outside_blocks': thread_parameters_outside_blocks(text),
    }


def read_repository(path):
    root = path.rstrip('/') or '/'
    exists = os.path.exists(root)
    is_dir = os.path.isdir(root)
    models = [_model(name, entry_path) for name, entry_path in _visible_entries(root)
              if os.path.isdir(entry_path)] if is_dir else []
    return {'path': root, 'exists': exists, 'is_dir': is_dir, 'models': models}


def layout_problems(info):
    if not info['exists']:
        return ['does not exist']
    if not info['is_dir']:
        return ['is not a directory']
    models = info['models']
    if not models:
        return ['holds no model directory']
    problems = []
    without_config = [model['name'] for model in models if model['config'] is None]
    if without_config:
        problems.append('model(s) without config.pbtxt: %s' % ', '.join(without_config))
    without_version = [model['name'] for model in models if not model['versions']]
    if without_version:
        problems.append('model(s) without a numeric version directory (e.g. 1/): %s' % ', '.join(without_version))
    return problems
