# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""module_utils/common/boot_package.py: what each role's boot script ships, the zip's bytes, the refusal, the diff."""

from __future__ import annotations

import hashlib
import io
import os
import subprocess
import sys
import zipfile

import pytest

from ansible_collections.inferops.node.plugins.module_utils.common import boot_package
from ansible_collections.inferops.node.tests.unit.host_package import (
    MODULE_UTILS, OLDER_LINE, older_package, role_script, write_package)

# Each role's boot script and the module_utils files its zip application carries.
SHIPPED = [
    ('irq_affinity', 'inferops_irq_pin.py',
     ['common.cpulist', 'common.pci', 'common.sysfs', 'fabric.nvme_fabrics', 'interrupts.irq', 'interrupts.irq_devices',
      'storage.blockdev', 'storage.mount_options', 'storage.nvme_common', 'storage.nvme_devices']),
    ('nic_queues', 'inferops_nic_queues.py',
     ['common.cpulist', 'common.pci', 'common.sysfs', 'fabric.nvme_fabrics', 'interrupts.irq', 'interrupts.irq_devices',
      'interrupts.nic_queues', 'storage.blockdev', 'storage.mount_options', 'storage.nvme_common',
      'storage.nvme_devices']),
    ('nvmeof_initiator', 'inferops_nvmf_connect.py',
     ['common.command', 'common.cpulist', 'common.sysfs', 'fabric.nvme_fabrics', 'storage.mount_options',
      'storage.nvme_common']),
    ('nvmeof_target', 'inferops_nvmet_restore.py',
     ['common.command', 'common.sysfs', 'fabric.nvmet', 'storage.nvme_common']),
]


def zip_names(modules):
    """The files of a package holding ``modules``: each module's file and its package's empty __init__.py."""
    files = set(['inferops/__init__.py'])
    for module in modules:
        package, name = module.split('.')
        files.update(['inferops/%s/__init__.py' % package, 'inferops/%s/%s.py' % (package, name)])
    return ['__main__.py'] + sorted(files)


@pytest.mark.parametrize('role, script, modules', SHIPPED)
def test_each_role_ships_what_its_script_imports_and_their_siblings(role, script, modules):
    data, names = boot_package.build(role_script(role, script), MODULE_UTILS)
    assert names == modules
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        infos = archive.infolist()
        assert [i.filename for i in infos] == zip_names(modules)
        assert not [i.filename for i in infos if i.filename.endswith('__init__.py') and archive.read(i)]
        with open(role_script(role, script), 'rb') as handle:
            assert archive.read('__main__.py') == handle.read()
        with open(os.path.join(MODULE_UTILS, 'common', 'sysfs.py'), 'rb') as handle:
            assert archive.read('inferops/common/sysfs.py') == handle.read()
        assert set((i.date_time, i.compress_type, i.external_attr >> 16) for i in infos) == set(
            [((1980, 1, 1, 0, 0, 0), zipfile.ZIP_STORED, 0o100644)])


def test_same_bytes_from_another_checkout_at_another_time(tmp_path):
    """Idempotent by checksum on any controller: file times and the clock are not in the zip."""
    first, dummy = boot_package.build(role_script('nvmeof_target', 'inferops_nvmet_restore.py'), MODULE_UTILS)
    utils = tmp_path / 'module_utils'
    utils.mkdir()
    for name in ('common/command', 'storage/nvme_common', 'fabric/nvmet', 'common/sysfs'):
        (utils / name).parent.mkdir(exist_ok=True)
        (utils / (name + '.py')).write_bytes(open(os.path.join(MODULE_UTILS, name + '.py'), 'rb').read())
        os.utime(str(utils / (name + '.py')), (1e9, 1e9))
    again, dummy = boot_package.build(role_script('nvmeof_target', 'inferops_nvmet_restore.py'), str(utils))
    assert again == first


@pytest.mark.parametrize('role, script, modules', SHIPPED)
def test_each_package_imports_without_ansible(tmp_path, role, script, modules):
    """python3 -ES (no site packages, so no Ansible) imports every file of the package from the zip."""
    package = str(write_package(role, script, tmp_path))
    code = 'import sys; sys.path.insert(0, sys.argv[1]); import %s' % ', '.join('inferops.' + m for m in modules)
    proc = subprocess.run([sys.executable, '-ES', '-c', code, package], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, check=False, env={'LC_ALL': 'C'})
    assert (proc.returncode, proc.stderr) == (0, '')


def test_optional_import_and_standard_library_pass(tmp_path):
    (tmp_path / 'main.py').write_text('from inferops import a\n')
    (tmp_path / 'a.py').write_text('import json\nfrom . import b\ntry:\n    import netaddr\nexcept ImportError:\n'
                                   '    netaddr = None\n')
    (tmp_path / 'b.py').write_text('from .c import X\n')
    (tmp_path / 'c.py').write_text('X = 1\n')
    dummy, names = boot_package.build(str(tmp_path / 'main.py'), str(tmp_path))
    assert names == ['a', 'b', 'c']


def test_relative_imports_across_packages_are_followed(tmp_path):
    """Level 1 within a package, level 2 into another: ``from ..common import x``, ``from ..common.y import Y``."""
    for package in ('net', 'common', 'unused'):
        (tmp_path / package).mkdir()
        (tmp_path / package / '__init__.py').write_text('')
    (tmp_path / 'main.py').write_text('from inferops.net import a\n')
    (tmp_path / 'net' / 'a.py').write_text('from . import b\nfrom ..common import x\nfrom ..common.y import Y\n')
    (tmp_path / 'net' / 'b.py').write_text('import os\n')
    (tmp_path / 'common' / 'x.py').write_text('X = 1\n')
    (tmp_path / 'common' / 'y.py').write_text('Y = 2\n')
    (tmp_path / 'unused' / 'z.py').write_text('Z = 3\n')
    data, names = boot_package.build(str(tmp_path / 'main.py'), str(tmp_path))
    assert names == ['common.x', 'common.y', 'net.a', 'net.b']
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        assert archive.namelist() == zip_names(names)
    package = tmp_path / 'main.pyz'
    package.write_bytes(data)
    code = 'import sys; sys.path.insert(0, sys.argv[1]); import inferops.net.a as a; print(a.x.X + a.Y)'
    proc = subprocess.run([sys.executable, '-ES', '-c', code, str(package)], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, check=False, env={'LC_ALL': 'C'})
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, '3\n', '')


@pytest.mark.parametrize('files, message', [
    ({'a.py': 'from ansible.module_utils.basic import AnsibleModule\n'},
     'a.py imports ansible.module_utils.basic, which a host without Ansible lacks'),
    ({'a.py': 'from . import b\n', 'b.py': 'import yaml\n'}, 'b.py imports yaml, which a host without Ansible lacks'),
    ({'a.py': 'from . import gone\n'}, 'gone.py: not in '),
    ({'a.py': 'from ..common import sysfs\n'}, 'a.py (from ..common import sysfs): the import goes above module_utils'),
    ({'main.py': 'from inferops.net import a\n', 'net/a.py': 'from ..common import gone\n'},
     'common/gone.py: not in '),
    ({'main.py': 'from inferops.net import a\n', 'net/a.py': 'from ..common.b import B\n',
      'common/b.py': 'import yaml\n'}, 'common/b.py imports yaml, which a host without Ansible lacks'),
])
def test_an_import_a_host_cannot_satisfy_is_refused(tmp_path, files, message):
    (tmp_path / 'main.py').write_text('from inferops import a\n')
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(text)
    with pytest.raises(boot_package.BootPackageError) as error:
        boot_package.build(str(tmp_path / 'main.py'), str(tmp_path))
    assert str(error.value).startswith(message)


DEST = '/usr/local/lib/inferops-nvmet-restore.pyz'


def nvmet_package():
    data, dummy = boot_package.build(role_script('nvmeof_target', 'inferops_nvmet_restore.py'), MODULE_UTILS)
    return data


def listed(data, names):
    """The listing lines diff() writes: the zip's sha1 and size, then each file's, computed here on their own."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        lines = ['%s: sha1 %s, %d bytes' % (DEST, hashlib.sha1(data).hexdigest(), len(data))] + [
            '%s  %6d  %s' % (hashlib.sha1(archive.read(n)).hexdigest(), len(archive.read(n)), n) for n in names]
    return '\n'.join(lines) + '\n'


NVMET_FILES = ['__main__.py', 'inferops/__init__.py', 'inferops/common/__init__.py', 'inferops/common/command.py',
               'inferops/common/sysfs.py', 'inferops/fabric/__init__.py', 'inferops/fabric/nvmet.py',
               'inferops/storage/__init__.py', 'inferops/storage/nvme_common.py']


def test_no_diff_when_the_installed_package_is_the_same():
    data = nvmet_package()
    assert boot_package.diff(DEST, data, data, 104448) == []


def test_first_install_lists_the_files_without_their_text():
    data = nvmet_package()
    assert boot_package.diff(DEST, None, data, 104448, 'file not found: ' + DEST) == [{
        'before_header': '%s (file not found: %s)' % (DEST, DEST), 'before': '',
        'after_header': DEST, 'after': listed(data, NVMET_FILES)}]


def test_an_upgrade_lists_the_files_then_diffs_each_one_that_changes():
    data = nvmet_package()
    old = older_package(data)
    listing, sysfs, configfs, nvmet = boot_package.diff(DEST, old, data, 104448)
    old_files = sorted(set(NVMET_FILES) - set(['inferops/common/sysfs.py']) | set(['inferops/configfs.py']))
    assert listing == {'before_header': DEST, 'before': listed(old, old_files),
                       'after_header': DEST, 'after': listed(data, NVMET_FILES)}
    with open(os.path.join(MODULE_UTILS, 'fabric', 'nvmet.py')) as handle:
        text = handle.read()
    assert nvmet == {'before_header': DEST + '/inferops/fabric/nvmet.py', 'after_header': DEST + '/inferops/fabric/nvmet.py',
                     'before': text.replace('\n', '\n' + OLDER_LINE, 1), 'after': text}
    assert configfs == {'before_header': DEST + '/inferops/configfs.py',
                        'after_header': DEST + '/inferops/configfs.py (removed)',
                        'before': 'CONFIGFS = "/sys/kernel/config"\n', 'after': ''}
    with open(os.path.join(MODULE_UTILS, 'common', 'sysfs.py')) as handle:
        assert sysfs == {'before_header': DEST + '/inferops/common/sysfs.py (absent)',
                         'after_header': DEST + '/inferops/common/sysfs.py', 'before': '', 'after': handle.read()}


def test_a_file_larger_than_the_callback_shows_gets_copys_marker():
    data = nvmet_package()
    entries = boot_package.diff(DEST, older_package(data), data, 10000)
    # nvmet.py (18 kB) on both sides and sysfs.py (4 kB) after: only the small side is there to diff.
    assert entries[3] == {'before_header': DEST + '/inferops/fabric/nvmet.py',
                          'after_header': DEST + '/inferops/fabric/nvmet.py', 'dst_larger': 10000, 'src_larger': 10000}
    assert set(entries[1]) == set(['before_header', 'after_header', 'before', 'after'])
    assert len(boot_package.diff(DEST, older_package(data), data, 0)[3]['before']) > 10000  # 0: no limit


def test_an_installed_file_that_is_not_a_zip_is_listed_as_it_is():
    data = nvmet_package()
    old = b'#!/usr/bin/python3\nprint("0.1.0 helper")\n'
    assert boot_package.diff(DEST, old, data, 104448) == [{
        'before_header': DEST + ' (not a zip application: File is not a zip file)',
        'before': '%s: sha1 %s, %d bytes\n' % (DEST, hashlib.sha1(old).hexdigest(), len(old)),
        'after_header': DEST, 'after': listed(data, NVMET_FILES)}]
