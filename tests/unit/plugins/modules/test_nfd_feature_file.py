# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""nfd_feature_file: the feature file written, kept, refreshed, shrunk and removed; check and diff mode."""

from __future__ import annotations

import datetime
import os

import pytest

from ansible_collections.inferops.node.plugins.modules import nfd_feature_file
from ansible_collections.inferops.node.tests.unit.module_harness import run_module

P = 'inferops.feature.node.kubernetes.io/'
LABELS = {P + 'nvmeof-connected': 'true', P + 'storage-profile': 'nvmeof'}
T0 = datetime.datetime(2026, 12, 2, 2, 0, 0, tzinfo=datetime.timezone.utc)


@pytest.fixture
def clock(monkeypatch):
    state = {'now': T0}
    monkeypatch.setattr(nfd_feature_file, 'now', lambda: state['now'])
    return state


@pytest.fixture
def path(tmp_path):
    # The directory does not exist yet, as on a worker where NFD's hostPath was never written.
    return str(tmp_path / 'features.d' / 'inferops-node')


def run(path, check_mode=False, diff=False, **args):
    args.setdefault('labels', LABELS)
    return run_module(nfd_feature_file.main, dict(path=path, **args), check_mode=check_mode, diff=diff)


def test_first_run_writes_atomically_with_expiry(clock, path):
    failed, result = run(path, diff=True)
    assert not failed and result['changed'] and result['reason'] == 'no file yet'
    with open(path) as handle:
        text = handle.read()
    assert text.splitlines()[2:] == ['# +expiry-time=2026-12-03T02:00:00Z', P + 'nvmeof-connected=true',
                                     P + 'storage-profile=nvmeof']
    assert result['diff']['before'] == '' and result['diff']['after'] == text
    assert result['expiry_time'] == '2026-12-03T02:00:00Z' and result['added'] == sorted(LABELS)
    # Only the file: no temporary file left behind (nfd-worker skips dot files anyway).
    assert os.listdir(os.path.dirname(path)) == ['inferops-node']
    assert oct(os.stat(path).st_mode & 0o777) == '0o644'


def test_rerun_is_unchanged_until_the_refresh_margin(clock, path):
    run(path)
    clock['now'] = T0 + datetime.timedelta(hours=11, minutes=59)
    failed, result = run(path)
    assert not failed and not result['changed'] and result['expiry_time'] == '2026-12-03T02:00:00Z'
    assert result['reason'].startswith('up to date, expires in ')
    clock['now'] = T0 + datetime.timedelta(hours=12, minutes=1)
    failed, result = run(path)
    assert result['changed'] and result['previous_expiry_time'] == '2026-12-03T02:00:00Z'
    assert result['expiry_time'] == '2026-12-03T14:01:00Z' and result['added'] == [] and result['removed'] == []


def test_a_failed_check_removes_its_label_at_once(clock, path):
    run(path)
    clock['now'] = T0 + datetime.timedelta(minutes=5)
    failed, result = run(path, labels={P + 'nvmeof-connected': 'true'})
    assert result['changed'] and result['reason'] == 'labels changed' and result['removed'] == [P + 'storage-profile']
    with open(path) as handle:
        assert 'storage-profile' not in handle.read()


def test_check_mode_writes_nothing(clock, path):
    failed, result = run(path, check_mode=True, diff=True)
    assert not failed and result['changed'] and not os.path.exists(path)
    assert '# +expiry-time=2026-12-03T02:00:00Z' in result['diff']['after']


def test_absent_removes_the_file(clock, path):
    run(path)
    failed, result = run(path, state='absent', check_mode=True)
    assert result['changed'] and os.path.exists(path)
    failed, result = run(path, state='absent')
    assert result['changed'] and not os.path.exists(path) and result['removed'] == sorted(LABELS)
    failed, result = run(path, state='absent')
    assert not result['changed'] and result['reason'] == 'no file'


def test_an_unreadable_expiry_is_rewritten(clock, path):
    os.makedirs(os.path.dirname(path))
    with open(path, 'w') as handle:
        handle.write('# +expiry-time=tomorrow\n' + ''.join('%s=%s\n' % item for item in sorted(LABELS.items())))
    failed, result = run(path)
    assert result['changed'] and result['reason'] == 'no readable expiry time'


@pytest.mark.parametrize('args, message', [
    ({'labels': {P + 'tuning-profile': 'nvmeof tuned'}},
     'labels: %stuning-profile: the label value "nvmeof tuned" must be letters, digits, "-", "_" or "." and begin '
     'and end with a letter or digit. Nothing was changed.' % P),
    ({'labels': {'a/b/c': 'x'}}, 'labels: a/b/c: the label name "a/b/c" holds more than one "/". Nothing was changed.'),
    ({'refresh_hours': 30}, 'refresh_hours = 30: must be a whole number of hours between 1 and expiry_hours (24). Nothing was changed.'),
])
def test_refused_before_writing(clock, path, args, message):
    failed, result = run(path, **args)
    assert failed and result['msg'] == message and not os.path.exists(path)


def test_hidden_file_name_refused(clock, tmp_path):
    failed, result = run(str(tmp_path / '.inferops-node'))
    assert failed and result['msg'].startswith('path=%s: must be an absolute file path whose name does not start '
                                               'with a dot' % (tmp_path / '.inferops-node'))
