# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The mount option rule (module_utils/storage/mount_options.py): every refusal, and what a remount applies."""

from __future__ import annotations

import pytest

from ansible_collections.inferops.node.plugins.module_utils.storage.mount_options import compare, option_errors

SEED = 'noatime,nodiratime,attr2,inode64,logbufs=8,logbsize=256k'


@pytest.mark.parametrize('opts', [
    SEED,
    'defaults',
    'ro,norecovery,nouuid',
    'relatime,lazytime,nodev,nosuid,noexec,nofail,_netdev,auto',
    'strictatime,sync,dirsync,iversion,nosymfollow',
    'inode32,discard,ikeep,largeio,filestreams,wsync,swalloc,grpid',
    'sysvgroups,noikeep,nolargeio,nodiscard,noquota',
    'usrquota,grpquota,prjquota,uqnoenforce,gqnoenforce,pqnoenforce,qnoenforce,quota,uquota,gquota,pquota',
    'sunit=1024,swidth=4096', 'sunit=0,swidth=0', 'noalign',
    'logbufs=2,logbsize=16k', 'logbsize=32768', 'logbsize=64K', 'allocsize=64m', 'allocsize=4k', 'allocsize=1g',
    'logdev=/dev/disk/by-id/nvme-log,rtdev=/dev/md/rt',
    'dax', 'dax=always', 'dax=never', 'dax=inode',
    'x-systemd.automount,x-systemd.device-timeout=30s,x-systemd.requires=network.target,x-systemd.makefs',
    'x-initrd.mount,x-gvfs-show,comment=systemd.automount',
    'context=system_u:object_r:default_t:s0,seclabel',
    'fscontext=system_u:object_r:fs_t:s0', 'defcontext=system_u:object_r:default_t:s0',
    'rootcontext=system_u:object_r:root_t:s0',
    'user,owner,group,users,silent',
    'nouser',
])
def test_valid(opts):
    assert option_errors(opts) == []


@pytest.mark.parametrize('opts, fragments', [
    # empty items
    ('', ['empty; write defaults']),
    ('noatime,,inode64', ['empty item (leading, trailing or doubled comma)']),
    (',noatime', ['empty item']),
    ('noatime,', ['empty item']),
    ('noatime,,x', ['empty item', 'x: unknown option']),
    # unknown, removed, blanks
    ('noatim', ['noatim: unknown option']),
    ('logbufs8', ['logbufs8: unknown option']),
    ('barrier', ['removed from XFS in kernel 4.19']),
    ('nobarrier', ['removed from XFS in kernel 4.19']),
    ('mand', ['mandatory locking was removed']),
    ('remount', ['not a filesystem option']),
    ('bind', ['bind mounts are not managed here']),
    ('noatime inode64', ['holds a blank']),
    ('x-systemd.automunt', ['systemd-fstab-generator does not know x-systemd.automunt']),
    ('x-systemd.requires', ['x-systemd.requires needs a value']),
    ('x-systemd.automount=yes', ['x-systemd.automount takes no value']),
    ('comment', ['comment needs a value']),
    ('context=', ['context needs an SELinux context']),
    ('context="a,b"', ['the value holds a blank, quote']),
    ('noatime=1', ['noatime takes no value']),
    ('inode64=yes', ['inode64 takes no value']),
    # conflicts
    ('ro,rw', ['ro and rw: conflicting']),
    ('noatime,relatime', ['noatime and relatime: conflicting']),
    ('relatime,strictatime', ['relatime and strictatime: conflicting']),
    ('noatime,relatime,strictatime', ['noatime and relatime and strictatime: conflicting']),
    ('atime,noatime', ['atime and noatime: conflicting']),
    ('diratime,nodiratime', ['diratime and nodiratime']),
    ('lazytime,nolazytime', ['lazytime and nolazytime']),
    ('dev,nodev', ['dev and nodev']),
    ('suid,nosuid', ['suid and nosuid']),
    ('exec,noexec', ['exec and noexec']),
    ('sync,async', ['sync and async']),
    ('auto,noauto', ['auto and noauto']),
    ('inode32,inode64', ['inode32 and inode64: conflicting']),
    ('discard,nodiscard', ['discard and nodiscard: conflicting']),
    ('ikeep,noikeep', ['ikeep and noikeep']),
    ('largeio,nolargeio', ['largeio and nolargeio']),
    ('attr2,noattr2', ['attr2 and noattr2']),
    ('grpid,sysvgroups', ['grpid and sysvgroups: conflicting']),
    ('bsdgroups,nogrpid', ['bsdgroups and nogrpid: conflicting']),
    ('noquota,usrquota,prjquota', ['noquota and prjquota, usrquota: conflicting']),
    ('dax,dax=never', ['dax and dax=never: conflicting values']),
    ('logbufs=4,logbufs=8', ['logbufs=4 and logbufs=8: conflicting values']),
    ('noatime,noatime', ['noatime: listed twice']),
    ('noalign,sunit=8,swidth=16', ['noalign and sunit/swidth: conflicting']),
    ('norecovery', ['norecovery: XFS mounts without log recovery only read-only']),
    # malformed values
    ('logbufs=1', ['logbufs=1: must be an integer from 2 to 8']),
    ('logbufs=9', ['logbufs=9: must be an integer from 2 to 8']),
    ('logbufs=eight', ['must be an integer from 2 to 8']),
    ('logbufs', ['logbufs: needs a value']),
    ('logbufs=', ['logbufs=: empty value']),
    ('logbsize=8k', ['logbsize=8k: must be 16k, 32k, 64k, 128k or 256k']),
    ('logbsize=512k', ['must be 16k, 32k, 64k, 128k or 256k']),
    ('logbsize=100k', ['must be 16k, 32k, 64k, 128k or 256k']),
    ('logbsize=256x', ['must be 16k, 32k, 64k, 128k or 256k']),
    ('allocsize=3k', ['allocsize=3k: must be a power of two from 4k to 1g']),
    ('allocsize=2g', ['must be a power of two from 4k to 1g']),
    ('allocsize=48k', ['must be a power of two']),
    ('sunit=64', ['sunit and swidth must be given together']),
    ('swidth=64', ['sunit and swidth must be given together']),
    ('sunit=64,swidth=96', ['sunit=64,swidth=96: swidth must be a multiple of sunit']),
    ('sunit=0,swidth=64', ['swidth must be a multiple of sunit']),
    ('sunit=-8,swidth=16', ['sunit=-8: must be a non-negative integer']),
    ('logdev=nvme0n1', ['logdev=nvme0n1: must be an absolute device path']),
    ('rtdev', ['rtdev: needs a value']),
    ('dax=sometimes', ['dax=sometimes: must be always, never or inode']),
])
def test_refused(opts, fragments):
    errors = option_errors(opts)
    joined = '; '.join(errors)
    for fragment in fragments:
        assert fragment in joined, errors


def test_only_xfs_and_strings():
    assert option_errors('noatime', fstype='ext4') == ["fstype 'ext4': only xfs options are known"]
    assert 'must be a string' in option_errors(['noatime'])[0]
    assert 'must be a string' in option_errors(None)[0]


def test_every_problem_is_reported():
    errors = option_errors('ro,rw,,logbufs=9,bogus')
    assert len(errors) == 4, errors


def test_compare_live_options_of_the_lab():
    """Live options as findmnt shows them on the lab guest (fixtures/findmnt/mounted.json)."""
    live = ['rw', 'noatime', 'nodiratime', 'attr2', 'inode64', 'logbufs=8', 'logbsize=256k', 'sunit=1024',
            'swidth=4096', 'noquota']
    assert compare(SEED, live) == {'missing': [], 'remount': [], 'pending': []}
    relatime = ['rw', 'relatime', 'attr2', 'inode64', 'logbufs=8', 'logbsize=256k', 'noquota']
    assert compare(SEED, relatime) == {'missing': ['noatime', 'nodiratime'], 'remount': ['noatime', 'nodiratime'],
                                       'pending': []}
    assert compare('noatime,logbufs=4,inode32', live) == {
        'missing': ['logbufs=4', 'inode32'], 'remount': [], 'pending': ['logbufs=4', 'inode32']}


def test_compare_skips_options_that_never_show():
    assert compare('defaults,nofail,_netdev,auto,x-systemd.automount,comment=x,noatime', ['rw', 'noatime'])['missing'] == []
    assert compare('nodev', ['rw'])['remount'] == ['nodev']
