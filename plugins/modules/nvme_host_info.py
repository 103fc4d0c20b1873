#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
---
module: nvme_host_info
short_description: Read an NVMe host's identity - its host NQN and host ID, and the ones it would get
version_added: 0.2.0
author:
  - inferops.node maintainers (@inferops)
description:
  - Reads the host NQN and host ID on file (the first line of C(/etc/nvme/hostnqn) and C(/etc/nvme/hostid),
    which C(nvme connect) presents) and works out the identity the host connects with (RV(identity)) - the
    one O(hostnqn) and O(hostid) give, else the one on file, else a new host NQN from C(nvme gen-hostnqn)
    (nvme-cli derives it from the machine's DMI product UUID where it has one). A host ID not given nor on file
    is the UUID of a C(nqn.2014-08.org.nvmexpress:uuid:<uuid>) host NQN, else derived from the NQN.
  - Runs C(nvme gen-hostnqn), in the C locale, only when neither O(hostnqn) nor the file gives a host NQN;
    never writes the files (the role C(inferops.node.nvmeof_initiator) does, with C(ansible.builtin.copy)).
  - Does not judge the identity; P(inferops.node.nvme_fabrics_identity_errors#filter) refuses one that is not
    an NQN and a UUID, or that two hosts share (cloned images keep their files).
options:
  hostnqn:
    description: The host NQN the inventory sets (C(nvmeof_initiator_hostnqn)); empty or null - none.
    type: str
  hostid:
    description: The host ID the inventory sets (C(nvmeof_initiator_hostid)); empty or null - none.
    type: str
extends_documentation_fragment:
  - inferops.node.info_module
attributes:
  platform:
    description: Linux hosts; nvme-cli only when the host NQN must be generated.
    support: full
    platforms: posix
notes:
  - The rule is C(host_identity) in C(plugins/module_utils/fabric/nvme_fabrics.py), the one
    M(inferops.node.nvme_connect) uses for its default host ID.
seealso:
  - module: inferops.node.nvme_connect
  - module: inferops.node.nvme_info
'''

EXAMPLES = r'''
- name: Work out the identity this host connects with
  inferops.node.nvme_host_info:
    hostnqn: "{{ nvmeof_initiator_hostnqn }}"
  register: nvme_host

- name: Refuse an identity another host shares
  ansible.builtin.assert:
    that: nvme_host.identity | inferops.node.nvme_fabrics_identity_errors(hostvars) == []
'''

RETURN = r'''
identity:
  description: The host NQN and host ID this host connects with, and where the host NQN comes from.
  returned: always
  type: dict
  contains:
    hostnqn:
      description: The host NQN.
      type: str
    hostid:
      description: The host ID, lower case.
      type: str
    hostnqn_source:
      description: V(nvmeof_initiator_hostnqn) (O(hostnqn)), V(/etc/nvme/hostnqn) or V(nvme gen-hostnqn).
      type: str
  sample: {"hostnqn": "nqn.2014-08.org.nvmexpress:uuid:0badc0de-0000-4000-8000-000000000001",
           "hostid": "0badc0de-0000-4000-8000-000000000001", "hostnqn_source": "/etc/nvme/hostnqn"}
hostnqn_file:
  description: The first line of C(/etc/nvme/hostnqn), stripped; null when the file is missing or empty.
  returned: always
  type: str
hostid_file:
  description: The first line of C(/etc/nvme/hostid), stripped; null when the file is missing or empty.
  returned: always
  type: str
generated_hostnqn:
  description: What C(nvme gen-hostnqn) printed; null when it did not run.
  returned: always
  type: str
command_log:
  description: The commands run, C({argv, rc, ran}) each.
  returned: always
  type: list
  elements: dict
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.inferops.node.plugins.module_utils.common import sysfs
from ansible_collections.inferops.node.plugins.module_utils.common import textfile
from ansible_collections.inferops.node.plugins.module_utils.common.command import CommandRunner
from ansible_collections.inferops.node.plugins.module_utils.fabric.nvme_fabrics import HOSTID_FILE, HOSTNQN_FILE, host_identity


def first_line(path):
    lines = (textfile.read_text(sysfs.host_path(path)) or '').splitlines()
    return (lines[0].strip() if lines else '') or None


def main():
    module = AnsibleModule(
        argument_spec=dict(hostnqn=dict(type='str'), hostid=dict(type='str')),
        supports_check_mode=True,
    )
    runner = CommandRunner(module)
    hostnqn, hostid = module.params['hostnqn'] or None, module.params['hostid'] or None
    on_file = first_line(HOSTNQN_FILE), first_line(HOSTID_FILE)
    generated = None
    if not hostnqn and not on_file[0]:
        if runner.find('nvme') is None:
            module.fail_json(msg='%s is missing or empty and nvme-cli (nvme gen-hostnqn) is not installed: install '
                                 'nvme-cli or set the host NQN (nvmeof_initiator_hostnqn)' % HOSTNQN_FILE,
                             command_log=runner.log)
        rc, out, err = runner.run(['nvme', 'gen-hostnqn'])
        generated = out.strip() or None
        if rc != 0 or not generated:
            module.fail_json(msg='nvme gen-hostnqn failed (rc %d): %s' % (rc, (err or out).strip()),
                             command_log=runner.log)
    identity = host_identity(on_file[0], on_file[1], generated, hostnqn=hostnqn, hostid=hostid)
    module.exit_json(changed=False, identity=identity, hostnqn_file=on_file[0], hostid_file=on_file[1],
                     generated_hostnqn=generated, command_log=runner.log)


if __name__ == '__main__':
    main()
