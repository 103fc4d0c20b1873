# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""triton_repository_info on repositories laid out on disk below tmp_path: the lab's toy models (the python
backend's ``add``, as molecule/serving/files/models holds it), an ONNX model with the block the role
triton_compose writes, and the layouts Triton refuses."""

from __future__ import annotations

import os

from ansible_collections.inferops.node.plugins.module_utils.serving.triton_repository import (
    onnx_runtime, thread_parameters_outside_blocks)
from ansible_collections.inferops.node.plugins.modules import triton_repository_info
from ansible_collections.inferops.node.tests.unit.module_harness import run_module

ADD = '''name: "add"
backend: "python"
max_batch_size: 0
input [
  { name: "INPUT0" data_type: TYPE_INT32 dims: [ 4 ] },
  { name: "INPUT1" data_type: TYPE_INT32 dims: [ 4 ] }
]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 4 ] } ]
instance_group [ { kind: KIND_CPU count: 1 } ]
'''
# What roles/triton_compose/tasks/onnx.yml leaves in an ONNX model's config (blockinfile, its marker).
ROLE_BLOCK = '''# BEGIN inferops.node triton_compose: ONNX Runtime threads
parameters { key: "intra_op_thread_count" value: { string_value: "16" } }
parameters { key: "inter_op_thread_count" value: { string_value: "2" } }
# END inferops.node triton_compose: ONNX Runtime threads
'''
RESNET = 'name: "resnet"\nplatform: "onnxruntime_onnx"\nmax_batch_size: 8\n'
BY_HAND = 'parameters { key: "intra_op_thread_count" value: { string_value: "4" } }\n'


def model(root, name, config=None, versions=('1',)):
    path = root / name
    path.mkdir(parents=True)
    for version in versions:
        (path / version).mkdir()
    if config is not None:
        (path / 'config.pbtxt').write_text(config)
    return path


def read(path, check_mode=False):
    failed, result = run_module(triton_repository_info.main, {'path': str(path)}, check_mode=check_mode)
    assert not failed and result['changed'] is False
    return result


def test_sound_repository_with_a_python_and_an_onnx_model(tmp_path):
    repo = tmp_path / 'models'
    model(repo, 'add', ADD, versions=('1', '3', 'notes'))
    model(repo, 'resnet', RESNET + ROLE_BLOCK)
    (repo / '.cache').mkdir()        # hidden: not a model
    (repo / 'README').write_text('')  # a file at the top: not a model
    result = read(str(repo) + '//', check_mode=True)
    assert result['problems'] == [] and result['exists'] and result['is_dir']
    assert result['path'] == str(repo)
    add, resnet = result['models']
    assert add == {'name': 'add', 'path': str(repo / 'add'), 'config': str(repo / 'add' / 'config.pbtxt'),
                   'versions': [1, 3], 'platform': None, 'backend': 'python', 'onnx_runtime': False,
                   'thread_parameters_outside_blocks': []}
    # The role's own block is not "set by hand".
    assert resnet['onnx_runtime'] and resnet['platform'] == 'onnxruntime_onnx'
    assert resnet['thread_parameters_outside_blocks'] == []


def test_a_model_directory_through_a_symbolic_link(tmp_path):
    model(tmp_path / 'elsewhere', 'add', ADD)
    repo = tmp_path / 'models'
    repo.mkdir()
    os.symlink(str(tmp_path / 'elsewhere' / 'add'), str(repo / 'add'))
    result = read(repo)
    assert result['problems'] == [] and [m['versions'] for m in result['models']] == [[1]]


def test_layout_problems_are_all_named(tmp_path):
    repo = tmp_path / 'models'
    model(repo, 'good', ADD)
    model(repo, 'noconfig')
    model(repo, 'noversion', ADD, versions=('latest',))
    model(repo, 'neither', versions=())
    result = read(repo)
    assert result['problems'] == [
        'model(s) without config.pbtxt: neither, noconfig',
        'model(s) without a numeric version directory (e.g. 1/): neither, noversion']


def test_missing_empty_and_not_a_directory(tmp_path):
    assert read(tmp_path / 'absent')['problems'] == ['does not exist']
    (tmp_path / 'file').write_text('')
    result = read(tmp_path / 'file')
    assert result['problems'] == ['is not a directory'] and result['exists'] and not result['is_dir']
    (tmp_path / 'empty').mkdir()
    assert read(tmp_path / 'empty')['problems'] == ['holds no model directory']


def test_thread_parameters_set_by_hand_are_found_beside_the_role_block(tmp_path):
    repo = tmp_path / 'models'
    model(repo, 'byhand', RESNET + BY_HAND + ROLE_BLOCK)
    model(repo, 'backend', 'name: "backend"\nbackend: "onnxruntime"\n' + BY_HAND.replace('intra', 'inter'))
    backend, byhand = read(repo)['models']  # sorted by name
    assert byhand['thread_parameters_outside_blocks'] == ['intra_op_thread_count']
    assert backend['onnx_runtime'] and backend['thread_parameters_outside_blocks'] == ['inter_op_thread_count']


def test_onnx_runtime_reads_top_level_fields_only():
    assert onnx_runtime('platform: "onnxruntime_onnx"\n')
    assert onnx_runtime('  backend : "onnxruntime"\n')
    assert not onnx_runtime('platform: "tensorrt_plan"\n')
    assert not onnx_runtime('backend: "python"\n# platform: onnxruntime_onnx (no quotes)\n')
    assert not onnx_runtime(None)
    assert thread_parameters_outside_blocks(ROLE_BLOCK) == []
