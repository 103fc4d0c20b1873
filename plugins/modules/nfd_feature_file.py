#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
---
module: nfd_feature_file
short_description: Publish Kubernetes node labels through a node-feature-discovery local feature file, with an expiry time
version_added: 0.1.0
author:
  - inferops.node maintainers (@inferops)
description:
  - Writes the labels in O(labels) to a feature file of node-feature-discovery's C(local) source
    (C(/etc/kubernetes/node-feature-discovery/features.d/)), which nfd-worker turns into labels of this
    node. Labels not in O(labels) are gone from the file, so nfd-master removes them from the node.
  - The file carries NFD's C(# +expiry-time=<RFC 3339>) directive before the labels; once the time has
    passed nfd-worker ignores them, so the labels lapse when nothing rewrites the file (the verification
    stopped running).
  - Idempotent - the file is rewritten (with a new expiry time O(expiry_hours) from now) only when the
    labels differ, the expiry time is missing or unreadable, or fewer than O(refresh_hours) of it remain.
    Otherwise nothing changes (changed=false), so a rerun reports no change, and labels lapse between
    O(expiry_hours) - O(refresh_hours) and O(expiry_hours) after the last run. Run it at least every
    O(expiry_hours) - O(refresh_hours) to keep the labels.
  - Atomic - written to a hidden temporary file in the same directory (nfd-worker skips names starting with
    a dot) and renamed into place, so nfd-worker never reads half a file.
  - Every label name and value is checked by Kubernetes' rules before anything is written (the rule of
    C(plugins/module_utils/serving/node_labels.py), which the filter P(inferops.node.k8s_node_labels_plan#filter)
    shares).
options:
  path:
    description:
      - The feature file. Its name must not start with a dot (nfd-worker ignores hidden files).
    type: path
    default: /etc/kubernetes/node-feature-discovery/features.d/inferops-node
  labels:
    description:
      - Label names (C(prefix/name)) and values; values are strings (V(true) for a flag).
      - An empty mapping leaves a file without labels, so every label this file published is removed.
    type: dict
    default: {}
  expiry_hours:
    description: How long labels stay valid after the file is written.
    type: int
    default: 24
  refresh_hours:
    description:
      - Rewrite the file (a new expiry time) once fewer than this many hours of it remain. Between 1 and
        O(expiry_hours).
    type: int
    default: 12
  state:
    description: V(absent) removes the file (and so every label it published).
    type: str
    choices: [present, absent]
    default: present
attributes:
  check_mode:
    description: Reports what would be written and changes nothing.
    support: full
  diff_mode:
    description: Returns the file's content before and after.
    support: full
  platform:
    description: Any POSIX host running nfd-worker with the local source (the default).
    support: full
    platforms: posix
notes:
  - nfd-master publishes labels in C(feature.node.kubernetes.io), C(profile.node.kubernetes.io) and their
    sub-namespaces whatever its configuration, never in other C(kubernetes.io) or C(k8s.io) namespaces;
    other namespaces need its C(extraLabelNs) on releases before 0.13.
  - Times are UTC; the host's clock decides when nfd-worker drops the labels.
seealso:
  - module: inferops.node.nvme_info
  - module: inferops.node.sysctl_info
  - name: node-feature-discovery, local feature source
    description: Feature files and their directives.
    link: https://kubernetes-sigs.github.io/node-feature-discovery/stable/usage/customization-guide.html#local-feature-source
'''

EXAMPLES = r'''
- name: Publish two labels for 24 h, refreshed when under 12 h remain
  inferops.node.nfd_feature_file:
    labels:
      inferops.feature.node.kubernetes.io/nvmeof-connected: "true"
      inferops.feature.node.kubernetes.io/storage-profile: nvmeof

- name: Withdraw every label of the file
  inferops.node.nfd_feature_file:
    state: absent
'''

RETURN = r'''
path:
  description: The feature file.
  returned: always
  type: str
  sample: /etc/kubernetes/node-feature-discovery/features.d/inferops-node
labels:
  description: The labels the file publishes after the run (empty with O(state=absent)).
  returned: always
  type: dict
  sample: {"inferops.feature.node.kubernetes.io/storage-profile": "nvmeof"}
previous_labels:
  description: The labels the file held before (an expired file's included).
  returned: always
  type: dict
added:
  description: Label names published now that the file did not hold.
  returned: always
  type: list
  elements: str
removed:
  description: Label names the file held and no longer does.
  returned: always
  type: list
  elements: str
expiry_time:
  description: When nfd-worker drops the labels (RFC 3339, UTC); null without a file.
  returned: always
  type: str
  sample: '2026-12-03T02:40:00Z'
previous_expiry_time:
  description: The expiry time the file held before; null without one.
  returned: always
  type: str
reason:
  description: Why the file was (or would be) written, or that it was up to date.
  returned: always
  type: str
  sample: labels changed
'''

import datetime
import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.inferops.node.plugins.module_utils.common import textfile
from ansible_collections.inferops.node.plugins.module_utils.serving import node_labels

# nfd-worker's MaxFeatureFileSize: a larger file is skipped whole.
MAX_FILE_SIZE = 65536


def now():
    """The current time (UTC); unit tests replace it."""
    return datetime.datetime.now(datetime.timezone.utc)


def _time(moment):
    return node_labels.format_time(moment) if moment else None


def main():
    module = AnsibleModule(
        argument_spec=dict(
            path=dict(type='path', default=node_labels.FEATURES_DIR + '/inferops-node'),
            labels=dict(type='dict', default={}),
            expiry_hours=dict(type='int', default=24),
            refresh_hours=dict(type='int', default=12),
            state=dict(type='str', choices=['present', 'absent'], default='present'),
        ),
        supports_check_mode=True,
    )
    params = module.params
    path = params['path']
    errors = []
    if not os.path.isabs(path) or os.path.basename(path).startswith('.') or path.endswith('/'):
        errors.append('path=%s: must be an absolute file path whose name does not start with a dot '
                      '(nfd-worker ignores hidden files)' % path)
    errors += node_labels.lifetime_errors(params['expiry_hours'], params['refresh_hours'])
    labels = params['labels']
    errors += ['labels: %s' % problem for problem in node_labels.label_errors(labels)]
    if errors:
        module.fail_json(msg='; '.join(errors) + '. Nothing was changed.', errors=errors)

    current = textfile.read_text(path)
    before = node_labels.parse(current)
    result = dict(changed=False, path=path, previous_labels=before['labels'],
                  previous_expiry_time=_time(before['expiry']))
    if params['state'] == 'absent':
        result.update(labels={}, added=[], removed=sorted(before['labels']), expiry_time=None,
                      reason='removed' if current is not None else 'no file')
        if current is not None:
            result['changed'] = True
            if module._diff:
                result['diff'] = {'before': current, 'after': '', 'before_header': path, 'after_header': path}
            if not module.check_mode:
                os.unlink(path)
        module.exit_json(**result)

    plan = node_labels.file_plan(current, labels, now(), params['expiry_hours'] * 3600,
                                 params['refresh_hours'] * 3600)
    if len(plan['content'].encode('utf-8')) > MAX_FILE_SIZE:
        module.fail_json(msg='labels: the file would be over %d bytes, which nfd-worker skips whole. '
                             'Nothing was changed.' % MAX_FILE_SIZE, **result)
    result.update(labels=labels, reason=plan['reason'], expiry_time=_time(plan['expiry']),
                  added=sorted(set(labels) - set(before['labels'])),
                  removed=sorted(set(before['labels']) - set(labels)))
    if plan['changed']:
        result['changed'] = True
        if module._diff:
            result['diff'] = {'before': current or '', 'after': plan['content'],
                              'before_header': path, 'after_header': path}
        if not module.check_mode:
            textfile.write_text_atomic(module, path, plan['content'], prefix='.inferops-nfd.')
    module.exit_json(**result)


if __name__ == '__main__':
    main()
