# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""nvmet_subsystem and the boot-time restore helper, on configfs trees modelled on target1.

``configfs.json`` and ``state_file.json`` in tests/unit/fixtures/nvme/nvmeof were recorded on
target1 of the nvmeof_pool lab after the converge (see the README there). ``FakeKernel``
rebuilds that tree (or an empty nvmet tree) under a temporary root and behaves like configfs
where the module depends on it, with the defaults and refusals seen on the guest: a new
directory comes with its attributes, an enabled port refuses address changes (EACCES), an
enabled namespace refuses device changes (EBUSY), enabling a port sets its inline data size.
"""

from __future__ import annotations

import copy
import errno
import functools
import importlib.machinery
import importlib.util
import json
import os
import shutil
import stat
import subprocess
import sys
import uuid

import pytest

from ansible_collections.inferops.node.plugins.module_utils.fabric import nvmet
from ansible_collections.inferops.node.plugins.module_utils.common import sysfs
from ansible_collections.inferops.node.plugins.modules import nvmet_subsystem
from ansible_collections.inferops.node.tests.unit import host_package, module_harness

HERE = os.path.dirname(os.path.abspath(__file__))
RESTORE = os.path.join(HERE, '..', '..', '..', '..', 'roles', 'nvmeof_target', 'files', 'inferops_nvmet_restore.py')
SUB = 'nqn.2026-09.internal.ai:lab-pool'
HOST = 'nqn.2014-08.org.nvmexpress:uuid:7e16d9e1-e671-4eb7-a92e-1455d7efcbff'
OTHER = 'nqn.2014-08.org.nvmexpress:uuid:0badc0de-0000-4000-8000-000000000001'
POOL = '/dev/disk/by-id/nvme-QEMU_NVMe_Ctrl_LABPOOL0'
SCRATCH = '/srv/nvmet/scratch.img'
KEY = 'DHHC-1:00:Dr1pVHGMP7LGDIkHR0b0ucS0hPb4hen8HssCMPmjcP3SazVy:'
# What molecule/nvmeof_pool asks the role for, as the role passes it to the module.
LAB = {
    'ports': [{'id': 1, 'transport': 'tcp', 'traddr': '10.77.0.10', 'trsvcid': 4420},
              {'id': 2, 'transport': 'rdma', 'traddr': '10.77.0.10', 'trsvcid': 4420}],
    'subsystems': [{'nqn': SUB, 'namespaces': [{'nsid': 1, 'path': POOL}, {'nsid': 2, 'path': SCRATCH, 'size': '64M'}],
                    'allowed_hosts': [{'nqn': HOST}], 'ports': [1, 2]}],
}
# Defaults of new configfs directories on target1 (kernel 6.1), from configfs.json.
SUBSYS_DEFAULTS = {'attr_allow_any_host': '0', 'attr_cntlid_max': '65519', 'attr_cntlid_min': '1', 'attr_model': 'Linux',
                   'attr_pi_enable': '0', 'attr_qid_max': '128', 'attr_version': '1.3'}
NS_DEFAULTS = {'ana_grpid': '1', 'buffered_io': '0', 'device_nguid': '00000000-0000-0000-0000-000000000000',
               'device_path': '(null)', 'enable': '0'}
PORT_DEFAULTS = {'addr_adrfam': '', 'addr_traddr': '', 'addr_treq': 'not specified', 'addr_trsvcid': '', 'addr_trtype': '',
                 'param_inline_data_size': '-1', 'param_pi_enable': '0'}
INLINE = {'tcp': '16384', 'rdma': '4096'}


fixture = functools.partial(module_harness.fixture, 'nvme', 'nvmeof')
run_module = functools.partial(module_harness.run_module, nvmet_subsystem.main)


class FakeKernel(object):
    def __init__(self, tmp_path, monkeypatch, snapshot='configfs.json', auth=False):
        self.root = str(tmp_path / 'guest')
        self.auth = auth
        self.link_errors = {}
        self.writes = []
        os.makedirs(self.root)
        data = json.loads(fixture('configfs.json'))
        if snapshot is None:
            data = {'dirs': [d for d in data['dirs'] if not d.startswith(nvmet.ROOT + '/') or d.count('/') == 5],
                    'files': dict((k, v) for k, v in data['files'].items() if not k.startswith(nvmet.ROOT)),
                    'links': dict((k, v) for k, v in data['links'].items() if not k.startswith(nvmet.ROOT)),
                    'nodes': data['nodes']}
            data['dirs'] = [d for d in data['dirs'] if not d.startswith(nvmet.ROOT + '/')] + [
                nvmet.ROOT + '/hosts', nvmet.ROOT + '/ports', nvmet.ROOT + '/subsystems']
        module_harness.build_tree(data, self.root)
        # the lab file namespace and the block device (recorded as a node) of the pool drive
        os.makedirs(self.path('/srv/nvmet'), exist_ok=True)
        with open(self.path(SCRATCH), 'w') as handle:
            handle.truncate(64 << 20)
        monkeypatch.setattr(sysfs, 'ROOT', self.root)
        real_mkdir, real_rmdir, real_symlink, real_unlink = os.mkdir, os.rmdir, os.symlink, os.unlink
        real_write = sysfs.write_attr
        kernel = self

        def mkdir(path, mode=0o777, **kwargs):
            real_mkdir(path, mode, **kwargs)
            if kernel.in_configfs(path):
                kernel.populate(path)

        def rmdir(path, **kwargs):
            if not kernel.in_configfs(path):
                return real_rmdir(path, **kwargs)
            rel = kernel.rel(path)
            parts = rel.split('/')
            if parts[0] == 'subsystems' and len(parts) == 2:
                if os.listdir(os.path.join(path, 'namespaces')) or os.listdir(os.path.join(path, 'allowed_hosts')):
                    raise OSError(errno.ENOTEMPTY, os.strerror(errno.ENOTEMPTY))
            if parts[0] == 'ports' and len(parts) == 2 and os.listdir(os.path.join(path, 'subsystems')):
                raise OSError(errno.EBUSY, os.strerror(errno.EBUSY))
            # configfs attributes go with their directory
            for top, dirs, files in os.walk(path, topdown=False):
                for name in files:
                    real_unlink(os.path.join(top, name))
                for name in dirs:
                    if os.path.islink(os.path.join(top, name)):
                        real_unlink(os.path.join(top, name))
                    else:
                        real_rmdir(os.path.join(top, name))
            real_rmdir(path)

        def symlink(target, link, **kwargs):
            if kernel.in_configfs(link):
                rel = kernel.rel(link)
                if rel in kernel.link_errors:
                    raise OSError(kernel.link_errors[rel], os.strerror(kernel.link_errors[rel]))
                parts = rel.split('/')
                if parts[0] == 'ports' and parts[2] == 'subsystems':
                    # enabling the port: the transport sets its inline data size
                    trtype = kernel.read('%s/ports/%s/addr_trtype' % (nvmet.ROOT, parts[1]))
                    size_path = kernel.path('%s/ports/%s/param_inline_data_size' % (nvmet.ROOT, parts[1]))
                    with open(size_path) as handle:
                        current = handle.read().strip()
                    if current == '-1':
                        with open(size_path, 'w') as handle:
                            handle.write(INLINE.get(trtype, '0') + '\n')
            return real_symlink(target, link, **kwargs)

        def unlink(path, **kwargs):
            return real_unlink(path, **kwargs)

        def write_attr(path, value):
            kernel.writes.append((path[len(nvmet.ROOT) + 1:] if path.startswith(nvmet.ROOT) else path, str(value)))
            if path.startswith(nvmet.ROOT + '/'):
                rel = path[len(nvmet.ROOT) + 1:]
                parts = rel.split('/')
                if parts[0] == 'ports' and parts[2].startswith('addr_') and os.listdir(
                        kernel.path('%s/ports/%s/subsystems' % (nvmet.ROOT, parts[1]))):
                    raise sysfs.SysfsWriteError(path, value, OSError(errno.EACCES, os.strerror(errno.EACCES)))
                if parts[0] == 'subsystems' and len(parts) == 5 and parts[4].startswith('device_') and kernel.read(
                        '%s/subsystems/%s/namespaces/%s/enable' % (nvmet.ROOT, parts[1], parts[3])) == '1':
                    raise sysfs.SysfsWriteError(path, value, OSError(errno.EBUSY, os.strerror(errno.EBUSY)))
                if parts[-1] == 'attr_allow_any_host' and str(value) == '1' and os.listdir(
                        kernel.path('%s/subsystems/%s/allowed_hosts' % (nvmet.ROOT, parts[1]))):
                    raise sysfs.SysfsWriteError(path, value, OSError(errno.EINVAL, os.strerror(errno.EINVAL)))
                if parts[-1] == 'enable' and str(value) == '1' and kernel.read(
                        '%s/subsystems/%s/namespaces/%s/device_path' % (nvmet.ROOT, parts[1], parts[3])) == '(null)':
                    raise sysfs.SysfsWriteError(path, value, OSError(errno.EINVAL, os.strerror(errno.EINVAL)))
            return real_write(path, value)

        monkeypatch.setattr(os, 'mkdir', mkdir)
        monkeypatch.setattr(os, 'rmdir', rmdir)
        monkeypatch.setattr(os, 'symlink', symlink)
        monkeypatch.setattr(os, 'unlink', unlink)
        monkeypatch.setattr(sysfs, 'write_attr', write_attr)
        monkeypatch.setattr(nvmet_subsystem, 'backing_kind',
                            lambda real: 'block' if real.startswith(self.path('/dev/')) else 'file')

        def run_command(module, args, **kwargs):
            raise AssertionError('unexpected command %r' % (args,))
        module_harness.patch_commands(monkeypatch, run_command)

    def path(self, target):
        return os.path.join(self.root, target.lstrip('/'))

    def rel(self, real):
        return os.path.relpath(real, self.path(nvmet.ROOT))

    def in_configfs(self, real):
        return real.startswith(self.path(nvmet.ROOT) + '/')

    def read(self, target):
        with open(self.path(target)) as handle:
            return handle.read().strip()

    def populate(self, real):
        """What configfs shows in a new directory (target1, kernel 6.1)."""
        parts = self.rel(real).split('/')
        files = {}
        if parts[0] == 'subsystems' and len(parts) == 2:
            files = dict(SUBSYS_DEFAULTS, attr_serial=uuid.uuid4().hex[:20])
            for sub in ('allowed_hosts', 'namespaces'):
                os.makedirs(os.path.join(real, sub))
        elif parts[0] == 'subsystems' and len(parts) == 4:
            files = dict(NS_DEFAULTS, device_uuid=str(uuid.uuid4()))
        elif parts[0] == 'ports' and len(parts) == 2:
            files = dict(PORT_DEFAULTS)
            for sub in ('referrals', 'subsystems', 'ana_groups/1'):
                os.makedirs(os.path.join(real, sub))
            files['ana_groups/1/ana_state'] = 'optimized'
        elif parts[0] == 'hosts' and len(parts) == 2 and self.auth:
            files = {'dhchap_key': '', 'dhchap_ctrl_key': '', 'dhchap_hash': 'hmac(sha256)', 'dhchap_dhgroup': 'null'}
        for name, value in files.items():
            with open(os.path.join(real, name), 'w') as handle:
                handle.write(value + '\n')

    def state(self):
        """The configuration as the module saves it."""
        return nvmet_subsystem.state_of(nvmet_subsystem.model_of(nvmet.read_state()))


def lab_args(kernel, **extra):
    args = copy.deepcopy(LAB)
    args['state_file'] = '/etc/nvmet/inferops-nvmet.json'
    args.update(extra)
    return args


def recorded_state():
    return json.loads(fixture('state_file.json'))


def load_restore():
    loader = importlib.machinery.SourceFileLoader('inferops_nvmet_restore', RESTORE)
    spec = importlib.util.spec_from_loader('inferops_nvmet_restore', loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


# ------------------------------------------------------------------ reading

def test_read_state_of_the_recorded_tree_is_the_recorded_state_file(tmp_path, monkeypatch):
    kernel = FakeKernel(tmp_path, monkeypatch)
    state = nvmet.read_state()
    assert [(ns['nsid'], ns['ana_grpid'], ns['buffered_io']) for ns in state['subsystems'][0]['namespaces']] == [(1, 1, 0), (2, 1, 0)]
    assert kernel.state() == recorded_state()


def test_derived_identities_are_the_ones_on_target1():
    """Serial and namespace UUIDs on target1 were derived from the NQN by the module."""
    state = recorded_state()['subsystems'][0]
    assert state['attr']['serial'] == nvmet_subsystem.derived_serial(SUB)
    assert [ns['device']['uuid'] for ns in state['namespaces']] == [
        nvmet_subsystem.derived_uuid(SUB, 1), nvmet_subsystem.derived_uuid(SUB, 2)]


# ------------------------------------------------------------------ converge

def test_fresh_target_gets_the_recorded_configuration(tmp_path, monkeypatch):
    kernel = FakeKernel(tmp_path, monkeypatch, snapshot=None)
    os.unlink(kernel.path(SCRATCH))
    failed, result = run_module(lab_args(kernel))
    assert not failed, result
    assert result['changed'] and result['state_file_changed']
    # the same configuration as on the guest, and the saved file is what target1 saved
    assert kernel.state() == recorded_state()
    saved = kernel.path('/etc/nvmet/inferops-nvmet.json')
    assert json.loads(open(saved).read()) == recorded_state()
    assert stat.S_IMODE(os.stat(saved).st_mode) == 0o600
    assert os.path.getsize(kernel.path(SCRATCH)) == 64 << 20
    changes = result['changes']
    assert changes[0] == 'mkdir hosts/%s' % HOST
    assert changes.index('write subsystems/%s/namespaces/1/device_path = %s' % (SUB, POOL)) < changes.index(
        'write subsystems/%s/namespaces/1/enable = 1' % SUB)
    assert changes.index('write ports/1/addr_trtype = tcp') < changes.index(
        'link ports/1/subsystems/%s -> subsystems/%s' % (SUB, SUB))
    assert result['subsystems'] == [{
        'nqn': SUB, 'state': 'present', 'allow_any_host': False, 'allowed_hosts': [HOST],
        'namespaces': [
            {'nsid': 1, 'path': POOL, 'uuid': nvmet_subsystem.derived_uuid(SUB, 1), 'nguid': '00000000-0000-0000-0000-000000000000',
             'enabled': True},
            {'nsid': 2, 'path': SCRATCH, 'uuid': nvmet_subsystem.derived_uuid(SUB, 2), 'nguid': '00000000-0000-0000-0000-000000000000',
             'enabled': True}],
        'ports': [1, 2], 'serial': nvmet_subsystem.derived_serial(SUB), 'model': 'Linux'}]
    assert [(p['id'], p['transport'], p['traddr'], p['trsvcid']) for p in result['ports']] == [
        (1, 'tcp', '10.77.0.10', 4420), (2, 'rdma', '10.77.0.10', 4420)]


def test_recorded_target_is_idempotent(tmp_path, monkeypatch):
    kernel = FakeKernel(tmp_path, monkeypatch)
    os.makedirs(kernel.path('/etc/nvmet'))
    with open(kernel.path('/etc/nvmet/inferops-nvmet.json'), 'w') as handle:
        handle.write(fixture('state_file.json'))
    os.chmod(kernel.path('/etc/nvmet/inferops-nvmet.json'), 0o600)
    failed, result = run_module(lab_args(kernel))
    assert not failed, result
    assert not result['changed'], result['changes']
    assert result['changes'] == [] and kernel.writes == []


def test_the_state_file_alone_shows_in_the_diff(tmp_path, monkeypatch):
    """configfs already right: a missing state file, then one with mode 0644, are the only changes - and the diff's."""
    kernel = FakeKernel(tmp_path, monkeypatch)
    saved = '/etc/nvmet/inferops-nvmet.json'
    failed, result = run_module(lab_args(kernel), check_mode=True, diff=True)
    assert not failed and result['changed'] and result['changes'] == []
    configuration, state_file = result['diff']
    assert configuration['before'] == configuration['after']
    assert state_file == {'before_header': saved, 'after_header': saved, 'before': '', 'after': fixture('state_file.json')}
    os.makedirs(kernel.path('/etc/nvmet'))
    with open(kernel.path(saved), 'w') as handle:
        handle.write(fixture('state_file.json'))
    os.chmod(kernel.path(saved), 0o644)
    failed, result = run_module(lab_args(kernel), diff=True)
    assert not failed and result['changed'] and result['changes'] == []
    assert [entry['before'] == entry['after'] for entry in result['diff'][:2]] == [True, True]
    assert result['diff'][2] == {'before': {'path': saved, 'mode': '0644'}, 'after': {'path': saved, 'mode': '0600'}}
    assert stat.S_IMODE(os.stat(kernel.path(saved)).st_mode) == 0o600


def test_check_mode_on_a_fresh_target(tmp_path, monkeypatch):
    kernel = FakeKernel(tmp_path, monkeypatch, snapshot=None)
    failed, result = run_module(lab_args(kernel), check_mode=True, diff=True)
    assert not failed, result
    assert result['changed'] and result['state_file_changed']
    assert kernel.writes == [] and os.listdir(kernel.path(nvmet.ROOT + '/subsystems')) == []
    assert not os.path.exists(kernel.path('/etc/nvmet/inferops-nvmet.json'))
    assert 'mkdir subsystems/%s' % SUB in result['changes']
    after = json.loads(result['diff'][0]['after'])
    assert result['diff'][1]['before'] == '' and json.loads(result['diff'][1]['after']) == after
    assert after['subsystems'][0]['allowed_hosts'] == [HOST]
    assert [p['portid'] for p in after['ports']] == [1, 2]


def test_port_down_then_restored_by_the_boot_helper(tmp_path, monkeypatch):
    """The fault of the molecule scenario: port 2 leaves the running target only; the helper brings it back."""
    kernel = FakeKernel(tmp_path, monkeypatch)
    failed, result = run_module({'ports': [{'id': 2, 'state': 'absent'}], 'persistent': 'ignore'})
    assert not failed, result
    assert result['changes'] == ['unlink ports/2/subsystems/%s' % SUB, 'rmdir ports/2']
    assert result['ports'] == [{'id': 2, 'state': 'absent'}] and not result['state_file_changed']
    assert [p['portid'] for p in kernel.state()['ports']] == [1]
    restore = load_restore()
    monkeypatch.setattr(restore, 'device_exists', lambda path: True)
    done, errors = restore.restore(recorded_state(), timeout=5)
    assert errors == []
    assert done == ['mkdir ports/2', 'write ports/2/addr_trtype = rdma', 'write ports/2/addr_adrfam = ipv4',
                    'write ports/2/addr_traddr = 10.77.0.10', 'write ports/2/addr_trsvcid = 4420',
                    'write ports/2/param_inline_data_size = 4096',
                    'link ports/2/subsystems/%s -> subsystems/%s' % (SUB, SUB)]
    assert kernel.state() == recorded_state()
    done, errors = restore.restore(recorded_state(), timeout=5)
    assert (done, errors) == ([], [])


def test_port_address_change_relinks_around_the_write(tmp_path, monkeypatch):
    kernel = FakeKernel(tmp_path, monkeypatch)
    args = lab_args(kernel)
    args['ports'][0]['traddr'] = '10.77.0.11'
    failed, result = run_module(args)
    assert not failed, result
    assert result['changes'] == ['unlink ports/1/subsystems/%s' % SUB, 'write ports/1/addr_traddr = 10.77.0.11',
                                 'link ports/1/subsystems/%s -> subsystems/%s' % (SUB, SUB)]
    assert kernel.read(nvmet.ROOT + '/ports/1/addr_traddr') == '10.77.0.11'


def test_namespace_device_change_disables_it_first(tmp_path, monkeypatch):
    kernel = FakeKernel(tmp_path, monkeypatch)
    with open(kernel.path('/srv/nvmet/other.img'), 'w') as handle:
        handle.truncate(1 << 20)
    args = lab_args(kernel)
    args['subsystems'][0]['namespaces'][1] = {'nsid': 2, 'path': '/srv/nvmet/other.img'}
    failed, result = run_module(args)
    assert not failed, result
    base = 'subsystems/%s/namespaces/2' % SUB
    assert result['changes'] == ['write %s/enable = 0' % base, 'write %s/device_path = /srv/nvmet/other.img' % base,
                                 'write %s/enable = 1' % base]
    # the namespace keeps its UUID (initiators match it in udev rules)
    assert kernel.read(nvmet.ROOT + '/' + base + '/device_uuid') == nvmet_subsystem.derived_uuid(SUB, 2)


def test_allowed_hosts_list_is_complete(tmp_path, monkeypatch):
    kernel = FakeKernel(tmp_path, monkeypatch)
    args = lab_args(kernel)
    args['subsystems'][0]['allowed_hosts'] = [{'nqn': OTHER}]
    failed, result = run_module(args)
    assert not failed, result
    assert result['changes'] == ['mkdir hosts/%s' % OTHER, 'unlink subsystems/%s/allowed_hosts/%s' % (SUB, HOST),
                                 'link subsystems/%s/allowed_hosts/%s -> hosts/%s' % (SUB, OTHER, OTHER),
                                 'rmdir hosts/%s' % HOST]
    assert kernel.state()['subsystems'][0]['allowed_hosts'] == [OTHER]
    # allow_any_host: the hosts go first, then the attribute (the kernel refuses both at once)
    args['subsystems'][0]['allowed_hosts'] = []
    args['subsystems'][0]['allow_any_host'] = True
    failed, result = run_module(args)
    assert not failed, result
    assert result['changes'][:2] == ['unlink subsystems/%s/allowed_hosts/%s' % (SUB, OTHER),
                                     'write subsystems/%s/attr_allow_any_host = 1' % SUB]


def empty_hosts_message(index, removed=None):
    """The refusal of an empty allowed-hosts list (module_utils/fabric/nvmet.py), as the module words it."""
    what = 'allowed_hosts is empty'
    if removed:
        what += ' (it would remove the last allowed host, %s)' % removed
    return ('subsystems[%d] (nqn = "%s"): %s, so the target would refuse every host (a connected host at its next '
            'reconnect); list the hosts allowed to connect in subsystems[%d].allowed_hosts, or set '
            'subsystems[%d].allow_no_hosts = true if no host may connect' % (index, SUB, what, index, index))


def test_empty_allowed_hosts_is_refused_on_a_fresh_target(tmp_path, monkeypatch):
    kernel = FakeKernel(tmp_path, monkeypatch, snapshot=None)
    before = kernel.state()
    args = lab_args(kernel)
    args['subsystems'][0]['allowed_hosts'] = []
    failed, result = run_module(args)
    assert failed
    assert result['msg'] == empty_hosts_message(0)
    assert kernel.writes == [] and result['changes'] == [] and kernel.state() == before
    assert os.listdir(kernel.path(nvmet.ROOT + '/subsystems')) == []
    assert not os.path.exists(kernel.path('/etc/nvmet/inferops-nvmet.json'))
    # check mode is refused the same way
    failed, result = run_module(args, check_mode=True)
    assert failed and result['msg'] == empty_hosts_message(0)


def test_removing_the_last_allowed_host_is_refused(tmp_path, monkeypatch):
    """target1 as recorded after the converge (compute1 connected): dropping its only host is refused."""
    kernel = FakeKernel(tmp_path, monkeypatch)
    before = kernel.state()
    assert before['subsystems'][0]['allowed_hosts'] == [HOST]
    args = lab_args(kernel)
    args['subsystems'][0]['allowed_hosts'] = []
    # a second subsystem listed first: the index in the message is the subsystem's own
    other = {'nqn': 'nqn.2026-09.internal.ai:lab-other', 'allowed_hosts': [{'nqn': OTHER}]}
    args['subsystems'].insert(0, other)
    failed, result = run_module(args)
    assert failed
    assert result['msg'] == empty_hosts_message(1, removed=HOST)
    assert kernel.writes == [] and kernel.state() == before
    # allow_any_host = false said explicitly changes nothing
    args['subsystems'][1]['allow_any_host'] = 'false'
    failed, result = run_module(args)
    assert failed and result['msg'] == empty_hosts_message(1, removed=HOST)
    assert kernel.writes == [] and kernel.state() == before


@pytest.mark.parametrize('opt_in', [True, 'true', 'yes', 1, 'on'])
def test_allow_no_hosts_accepts_an_empty_list(tmp_path, monkeypatch, opt_in):
    kernel = FakeKernel(tmp_path, monkeypatch)
    args = lab_args(kernel)
    args['subsystems'][0]['allowed_hosts'] = []
    args['subsystems'][0]['allow_no_hosts'] = opt_in
    failed, result = run_module(args)
    assert not failed, result
    assert result['changes'] == ['unlink subsystems/%s/allowed_hosts/%s' % (SUB, HOST), 'rmdir hosts/%s' % HOST]
    state = kernel.state()
    assert state['subsystems'][0]['allowed_hosts'] == [] and state['hosts'] == []
    assert state['subsystems'][0]['attr']['allow_any_host'] == '0'
    assert result['subsystems'][0]['allowed_hosts'] == [] and result['subsystems'][0]['allow_any_host'] is False
    # and again: nothing to do
    failed, result = run_module(args)
    assert not failed and not result['changed'], result


def test_allow_no_hosts_on_a_fresh_target(tmp_path, monkeypatch):
    kernel = FakeKernel(tmp_path, monkeypatch, snapshot=None)
    args = lab_args(kernel)
    args['subsystems'][0]['allowed_hosts'] = []
    args['subsystems'][0]['allow_no_hosts'] = True
    failed, result = run_module(args)
    assert not failed, result
    assert kernel.state()['subsystems'][0]['allowed_hosts'] == [] and kernel.state()['hosts'] == []


@pytest.mark.parametrize('change, message', [
    ({'allow_no_hosts': True},
     'subsystems[0] (nqn = "%s"): allow_no_hosts = true and allowed_hosts are exclusive; empty subsystems[0].allowed_hosts '
     'if no host may connect, or set subsystems[0].allow_no_hosts = false' % SUB),
    ({'allow_no_hosts': 'yes', 'allow_any_host': True, 'allowed_hosts': []},
     'subsystems[0] (nqn = "%s"): allow_no_hosts = true and allow_any_host = true are exclusive; set '
     'subsystems[0].allow_no_hosts = false to let any host connect, or subsystems[0].allow_any_host = false if no '
     'host may connect' % SUB),
])
def test_allow_no_hosts_contradictions_are_refused(tmp_path, monkeypatch, change, message):
    kernel = FakeKernel(tmp_path, monkeypatch)
    before = kernel.state()
    args = lab_args(kernel)
    args['subsystems'][0].update(change)
    failed, result = run_module(args)
    assert failed and result['msg'] == message
    assert kernel.writes == [] and kernel.state() == before


def test_an_absent_subsystem_needs_no_hosts(tmp_path, monkeypatch):
    kernel = FakeKernel(tmp_path, monkeypatch)
    failed, result = run_module({'subsystems': [{'nqn': SUB, 'state': 'absent', 'allowed_hosts': []}],
                                 'state_file': '/etc/nvmet/x.json'})
    assert not failed, result


def test_remove_the_subsystem(tmp_path, monkeypatch):
    kernel = FakeKernel(tmp_path, monkeypatch)
    failed, result = run_module({'subsystems': [{'nqn': SUB, 'state': 'absent'}], 'state_file': '/etc/nvmet/x.json'})
    assert not failed, result
    state = kernel.state()
    assert state['subsystems'] == [] and state['hosts'] == []
    assert [p['subsystems'] for p in state['ports']] == [[], []]
    assert result['changes'][-1] == 'rmdir hosts/%s' % HOST
    assert json.loads(open(kernel.path('/etc/nvmet/x.json')).read())['subsystems'] == []


def test_kernel_refusal_is_reported_with_what_was_done(tmp_path, monkeypatch):
    kernel = FakeKernel(tmp_path, monkeypatch, snapshot=None)
    kernel.link_errors['ports/1/subsystems/%s' % SUB] = errno.EADDRNOTAVAIL
    failed, result = run_module(lab_args(kernel))
    assert failed
    assert 'linking /sys/kernel/config/nvmet/subsystems/%s into /sys/kernel/config/nvmet/ports/1/subsystems/%s' % (
        SUB, SUB) in result['msg']
    assert os.strerror(errno.EADDRNOTAVAIL) in result['msg']
    # what was done before the refusal, and not the refused link itself
    assert 'write ports/1/addr_traddr = 10.77.0.10' in result['changes']
    assert 'link ports/1/subsystems/%s -> subsystems/%s' % (SUB, SUB) not in result['changes']


def test_dhchap_keys_need_kernel_support_and_are_never_shown(tmp_path, monkeypatch):
    kernel = FakeKernel(tmp_path, monkeypatch, snapshot=None, auth=True)
    args = lab_args(kernel)
    args['subsystems'][0]['allowed_hosts'] = [{'nqn': HOST, 'auth': 'dhchap', 'dhchap_key': KEY}]
    # target1's kernel: "# CONFIG_NVME_TARGET_AUTH is not set"
    failed, result = run_module(args)
    assert failed and 'built without CONFIG_NVME_TARGET_AUTH' in result['msg']
    assert kernel.writes == []
    release = kernel.read('/proc/sys/kernel/osrelease')
    with open(kernel.path('/boot/config-%s' % release), 'w') as handle:
        handle.write('CONFIG_NVME_TARGET_AUTH=y\n')
    failed, result = run_module(args, diff=True)
    assert not failed, result
    assert 'write hosts/%s/dhchap_key = ********' % HOST in result['changes']
    assert KEY not in json.dumps(result)
    assert '"dhchap_key": "********"' in result['diff'][1]['after']
    assert kernel.read(nvmet.ROOT + '/hosts/%s/dhchap_key' % HOST) == KEY
    assert json.loads(open(kernel.path('/etc/nvmet/inferops-nvmet.json')).read())['hosts'][0]['dhchap_key'] == KEY


@pytest.mark.parametrize('change, message', [
    ({'subsystems': [{'nqn': 'pool-01'}]}, "subsystems[0].nqn='pool-01' is not an NQN"),
    ({'ports': [{'id': 1, 'transport': 'tcp', 'traddr': '10.77.0.256'}]}, "ports[0].traddr='10.77.0.256' is not an IPv4 or IPv6 address"),
    ({'ports': [{'id': 1, 'transport': 'tcp', 'traddr': '10.77.0.10', 'trsvcid': 65536}]}, 'ports[0].trsvcid=65536 is out of range (1-65535)'),
    ({'ports': [{'id': 70000, 'transport': 'tcp', 'traddr': '10.77.0.10'}]}, 'ports[0].id=70000 is out of range (1-65535)'),
    ({'ports': [{'id': 1, 'transport': 'udp', 'traddr': '10.77.0.10'}]}, 'transport'),
    ({'ports': [{'id': 1, 'transport': 'tcp'}]}, 'traddr'),
    ({'subsystems': [{'nqn': SUB, 'allowed_hosts': [{'nqn': HOST, 'auth': 'dhchap'}]}]},
     'subsystems[0].allowed_hosts[0].auth=dhchap needs subsystems[0].allowed_hosts[0].dhchap_key (the host secret is missing)'),
    ({'subsystems': [{'nqn': SUB, 'allow_any_host': True, 'allowed_hosts': [{'nqn': HOST}]}]}, 'are exclusive'),
    ({'subsystems': [{'nqn': SUB, 'namespaces': [{'nsid': 1, 'path': '/srv/nvmet/missing.img'}]}]}, 'does not exist (give size'),
    ({'subsystems': [{'nqn': SUB, 'namespaces': [{'nsid': 1, 'path': SCRATCH}, {'nsid': 2, 'path': SCRATCH}]}]},
     'is already the backing store of subsystems[0].namespaces[0]'),
    ({'subsystems': [{'nqn': SUB, 'namespaces': [{'nsid': 0, 'path': SCRATCH}]}]}, 'nsid=0 is out of range'),
    ({'subsystems': [{'nqn': SUB, 'ports': [9]}]}, 'lists port 9, which is neither in ports nor configured on this host'),
    ({'subsystems': [{'nqn': SUB, 'serial': 'x' * 21}]}, 'serial'),
    ({'subsystems': [{'nqn': SUB}]}, empty_hosts_message(0, removed=HOST)),
    ({'subsystems': [{'nqn': SUB, 'allowed_hosts': [], 'allow_no_hosts': 'maybe'}]}, 'allow_no_hosts'),
])
def test_bad_input_changes_nothing(tmp_path, monkeypatch, change, message):
    kernel = FakeKernel(tmp_path, monkeypatch)
    before = kernel.state()
    failed, result = run_module(dict({'state_file': '/etc/nvmet/x.json'}, **change))
    assert failed
    assert message in result['msg']
    assert kernel.writes == [] and kernel.state() == before
    assert not os.path.exists(kernel.path('/etc/nvmet/x.json'))


def test_a_mounted_block_device_is_not_exported(tmp_path, monkeypatch):
    kernel = FakeKernel(tmp_path, monkeypatch, snapshot=None)
    mountinfo = kernel.path('/proc/self/mountinfo')
    dev = kernel.read('/sys/class/block/nvme0n1/dev')
    with open(mountinfo, 'a') as handle:
        handle.write('99 29 %s / /mnt/seed rw,relatime shared:50 - xfs /dev/nvme0n1 rw\n' % dev)
    failed, result = run_module(lab_args(kernel))
    assert failed
    assert "subsystems[0].namespaces[0].path='%s' (nvme0n1) is in use on this host: mounted on /mnt/seed" % POOL in result['msg']
    assert kernel.writes == []


def test_restore_waits_for_late_devices_and_ports(tmp_path, monkeypatch):
    """At boot the link address may not be there yet: the helper retries, then reports what failed."""
    kernel = FakeKernel(tmp_path, monkeypatch, snapshot=None)
    restore = load_restore()
    seen = set()
    monkeypatch.setattr(restore, 'device_exists', lambda path: path in seen)
    kernel.link_errors['ports/2/subsystems/%s' % SUB] = errno.EADDRNOTAVAIL
    clock = [0.0]

    def sleep(seconds):
        clock[0] += seconds
        seen.add(POOL)
        seen.add(SCRATCH)
    done, errors = restore.restore(recorded_state(), timeout=3, sleep=sleep, clock=lambda: clock[0])
    # the message is module_utils/fabric/nvmet.py's (the helper imports it): what failed, and why
    assert errors == ['port 2 (rdma 10.77.0.10:4420): linking %s/subsystems/%s into %s/ports/2/subsystems/%s: %s' % (
        nvmet.ROOT, SUB, nvmet.ROOT, SUB, os.strerror(errno.EADDRNOTAVAIL))]
    assert clock[0] == 3
    # a refused link is not a change: the lab's 120 s of retries once reported 50 links "done"
    assert not [line for line in done if line.startswith('link ports/2/')]
    state = kernel.state()
    assert [ns['enable'] for ns in state['subsystems'][0]['namespaces']] == [1, 1]
    assert state['ports'][0]['subsystems'] == [SUB] and state['ports'][1]['subsystems'] == []
    del kernel.link_errors['ports/2/subsystems/%s' % SUB]
    done, errors = restore.restore(recorded_state(), timeout=3, sleep=sleep, clock=lambda: clock[0])
    assert errors == [] and done == ['link ports/2/subsystems/%s -> subsystems/%s' % (SUB, SUB)]
    assert kernel.state() == recorded_state()


def test_restore_only_adds_an_enabled_port_or_namespace_stays_as_it_is(tmp_path, monkeypatch):
    """The helper shares nvmet.write_port/write_namespace with the module, but never unlinks nor disables: on the
    recorded target, a saved file with port 1 on another address and namespace 1 on another device is refused for
    the port and left alone for the namespace - nothing written, the hosts keep their paths."""
    kernel = FakeKernel(tmp_path, monkeypatch)
    restore = load_restore()
    monkeypatch.setattr(restore, 'device_exists', lambda path: True)
    saved = recorded_state()
    saved['ports'][0]['addr']['traddr'] = '10.77.0.99'
    saved['subsystems'][0]['namespaces'][0]['device']['path'] = '/dev/other'
    done, errors = restore.restore(saved, timeout=0)
    assert done == []
    assert errors == ['port 1 (tcp 10.77.0.99:4420): port 1 is enabled with another address (traddr)']
    assert kernel.state() == recorded_state()


def test_restore_main_without_a_saved_file(tmp_path, capsys):
    restore = load_restore()
    assert restore.main([str(tmp_path / 'none.json'), '--root', str(tmp_path)]) == 0
    assert 'nothing to restore' in capsys.readouterr().out


def test_modprobe_runs_in_the_c_locale(tmp_path, monkeypatch):
    """nvmet not loaded yet: the module loads it, with messages in the C locale (they end up in its refusal)."""
    kernel = FakeKernel(tmp_path, monkeypatch, snapshot=None)
    shutil.rmtree(kernel.path(nvmet.ROOT))
    replay = module_harness.Replay(monkeypatch, [
        {'command': ['modprobe', 'nvmet'], 'environ': {'LANG': 'C', 'LC_ALL': 'C', 'LC_MESSAGES': 'C'}, 'rc': 1,
         'err': "modprobe: FATAL: Module nvmet not found in directory /lib/modules/6.1.0-lab\n"},
    ])
    failed, result = run_module(lab_args(kernel))
    replay.done()
    assert failed
    assert result['command_log'] == [{'argv': ['modprobe', 'nvmet'], 'rc': 1, 'ran': True}]
    assert result['msg'].startswith('nvmet is not available: modprobe nvmet: modprobe: FATAL: Module nvmet not found')


def test_check_mode_does_not_load_nvmet(tmp_path, monkeypatch):
    """nvmet not loaded and --check: nothing is run (modprobe changes the host), the plan is reported."""
    kernel = FakeKernel(tmp_path, monkeypatch, snapshot=None)
    shutil.rmtree(kernel.path(nvmet.ROOT))
    replay = module_harness.Replay(monkeypatch, [])
    failed, result = run_module(lab_args(kernel), check_mode=True)
    replay.done()
    assert result['command_log'] == []


def test_restore_helper_runs_from_its_package(tmp_path):
    """As the role installs it: the zip application of the helper and the package inferops inside it (nvmet.py
    and its siblings), run with python3 -ES (no site packages, no Ansible): it imports those."""
    package = host_package.write_package('nvmeof_target', 'inferops_nvmet_restore.py', tmp_path / 'lib')
    root = tmp_path / 'root'
    for rel in ('hosts', 'subsystems', 'ports'):
        (root / nvmet.ROOT.lstrip('/') / rel).mkdir(parents=True)
    saved = tmp_path / 'saved.json'
    saved.write_text(json.dumps({'hosts': [{'nqn': HOST}], 'ports': [], 'subsystems': []}))
    proc = subprocess.run([sys.executable, '-ES', str(package), '--root', str(root), str(saved)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, check=False,
                          env={'LC_ALL': 'C', 'PATH': '/usr/bin:/bin'})
    assert (proc.returncode, proc.stderr) == (0, '')
    assert proc.stdout.splitlines() == ['mkdir hosts/%s' % HOST, '%s: 1 change(s), 0 failure(s)' % saved]
    assert (root / nvmet.ROOT.lstrip('/') / 'hosts' / HOST).is_dir()
