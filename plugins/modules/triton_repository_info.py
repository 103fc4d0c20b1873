#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
---
module: triton_repository_info
short_description: Read a Triton model repository on disk - its models, configs, versions and backends
version_added: 0.2.0
author:
  - inferops.node maintainers (@inferops)
description:
  - Lists the models of a Triton model repository (each visible directory at its top, symbolic links
    followed as Triton follows them), and for each its C(config.pbtxt), its numeric version directories, the
    C(platform) and C(backend) its config names, whether ONNX Runtime runs it, and the ONNX Runtime thread
    parameters its config sets outside a block this collection manages.
  - Tells what keeps Triton from loading the repository (RV(problems)) - a missing directory, no model, a
    model without C(config.pbtxt) or without a numeric version directory - without failing, so that a caller
    can name its own variable.
  - Never changes anything and runs no command.
options:
  path:
    description: The model repository on the host (C(tritonserver --model-repository)).
    type: path
    required: true
extends_documentation_fragment:
  - inferops.node.info_module
attributes:
  platform:
    description: POSIX hosts.
    support: full
    platforms: posix
notes:
  - The rules are C(plugins/module_utils/serving/triton_repository.py); the role C(inferops.node.triton_compose)
    refuses a repository with problems before it changes anything, and refuses ONNX configs that set the
    thread counts its server flags set (it never writes into the repository).
seealso:
  - module: inferops.node.triton_info
'''

EXAMPLES = r'''
- name: Read the model repository
  inferops.node.triton_repository_info:
    path: /data/models
  register: repository

- name: Refuse a repository Triton cannot load
  ansible.builtin.assert:
    that: repository.problems == []
    fail_msg: "/data/models: {{ repository.problems | join('; ') }}"

- name: List the ONNX models' configs
  ansible.builtin.debug:
    msg: "{{ repository.models | selectattr('onnx_runtime') | map(attribute='config') | list }}"
'''

RETURN = r'''
path:
  description: The repository, without a trailing slash.
  returned: always
  type: str
  sample: /data/models
exists:
  description: Whether the path exists (a dangling link does not).
  returned: always
  type: bool
is_dir:
  description: Whether it is a directory (or a link to one).
  returned: always
  type: bool
models:
  description: One entry per visible directory at the top of the repository, sorted by name.
  returned: always
  type: list
  elements: dict
  contains:
    name:
      description: The model's name (its directory).
      type: str
    path:
      description: The model's directory.
      type: str
    config:
      description: Its C(config.pbtxt), or null when it has none.
      type: str
    versions:
      description: Its numeric version directories, ascending.
      type: list
      elements: int
    platform:
      description: The C(platform) its config names, or null.
      type: str
    backend:
      description: The C(backend) its config names, or null.
      type: str
    onnx_runtime:
      description: Whether ONNX Runtime runs it (platform C(onnxruntime_onnx) or backend C(onnxruntime)).
      type: bool
    thread_parameters_outside_blocks:
      description:
        - The ONNX Runtime thread parameters (C(intra_op_thread_count), C(inter_op_thread_count)) that its config
          names outside the C(# BEGIN inferops.node ...) / C(# END inferops.node ...) blocks this collection
          writes.
      type: list
      elements: str
  sample: [{"name": "resnet", "path": "/data/models/resnet", "config": "/data/models/resnet/config.pbtxt",
            "versions": [1], "platform": "onnxruntime_onnx", "backend": null, "onnx_runtime": true,
            "thread_parameters_outside_blocks": []}]
problems:
  description: What keeps Triton from loading the repository; empty when its layout is sound.
  returned: always
  type: list
  elements: str
  sample: ["model(s) without config.pbtxt: noconfig"]
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.inferops.node.plugins.module_utils.serving.triton_repository import layout_problems, read_repository


def main():
    module = AnsibleModule(
        argument_spec=dict(path=dict(type='path', required=True)),
        supports_check_mode=True,
    )
    info = read_repository(module.params['path'])
    module.exit_json(changed=False, problems=layout_problems(info), **info)


if __name__ == '__main__':
    main()
