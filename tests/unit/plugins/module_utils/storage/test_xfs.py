# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""xfs_info's text and findmnt's space, as recorded on the local_nvme lab guest
(tests/unit/fixtures/md_info: arrays = the roles' RAID0 XFS, misfit = a V4 XFS without ftype)."""

from __future__ import annotations

from ansible_collections.inferops.node.plugins.module_utils.storage import xfs
from ansible_collections.inferops.node.tests.unit.module_harness import fixture


def test_every_section_and_field_of_a_v5_filesystem():
    sections = xfs.parse_xfs_info(fixture('md_info', 'arrays', 'xfs_info.models.txt'))
    assert sorted(sections) == sorted(xfs.SECTIONS)
    assert sections['meta-data'] == {
        'name': '/dev/md127', 'isize': 512, 'agcount': 8, 'agsize': 130816, 'sectsz': 512, 'attr': 2,
        'projid32bit': 1, 'crc': 1, 'finobt': 1, 'sparse': 1, 'rmapbt': 0, 'reflink': 1, 'bigtime': 1,
        'inobtcount': 1, 'nrext64': 0}
    assert sections['data'] == {'bsize': 4096, 'blocks': 1046528, 'imaxpct': 25, 'sunit': 128, 'swidth': 512}
    assert sections['naming'] == {'name': 'version 2', 'bsize': 4096, 'ascii-ci': 0, 'ftype': 1}
    # The same key in another section keeps its own value (the log's stripe unit is 8 blocks).
    assert sections['log'] == {'name': 'internal log', 'bsize': 4096, 'blocks': 16384, 'version': 2, 'sectsz': 512,
                               'sunit': 8, 'lazy-count': 1}
    assert sections['realtime'] == {'name': 'none', 'extsz': 4096, 'blocks': 0, 'rtextents': 0}


def test_geometry_of_the_roles_filesystem_and_of_a_misfit():
    assert xfs.geometry(xfs.parse_xfs_info(fixture('md_info', 'arrays', 'xfs_info.models.txt'))) == {
        'block_size': 4096, 'sunit_bytes': 524288, 'swidth_bytes': 2097152, 'ftype': 1, 'crc': 1, 'reflink': 1,
        'agcount': 8}
    assert xfs.geometry(xfs.parse_xfs_info(fixture('md_info', 'misfit', 'xfs_info.index.txt'))) == {
        'block_size': 4096, 'sunit_bytes': 65536, 'swidth_bytes': 65536, 'ftype': 0, 'crc': 0, 'reflink': 0,
        'agcount': 8}


def test_geometry_of_unreadable_output_is_unknown_not_zero():
    assert xfs.geometry(xfs.parse_xfs_info('xfs_info: /data/models is not a mounted XFS filesystem\n')) == {
        'block_size': None, 'sunit_bytes': None, 'swidth_bytes': None, 'ftype': None, 'crc': None, 'reflink': None,
        'agcount': None}


def test_space_of_one_mount_point():
    assert xfs.parse_space(fixture('md_info', 'misfit', 'space.index.json')) == {
        'size_bytes': 1004535808, 'avail_bytes': 26849280, 'used_bytes': 977686528}
    assert xfs.space_argv('/data/models') == ['findmnt', '-J', '-b', '-o', 'TARGET,SIZE,AVAIL,USED', '--mountpoint',
                                              '/data/models']
