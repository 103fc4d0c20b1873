# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter warmup_errors and module_utils/serving/warmup_input.py (the warmup role's rules)."""

from __future__ import annotations

import os

import pytest
import yaml

from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.node.plugins.filter.warmup import FilterModule

ROOT = os.path.join(os.path.dirname(__file__), '..', '..', '..', '..')
warmup_errors = FilterModule().filters()['warmup_errors']


def defaults(**overrides):
    """The role's defaults (roles/warmup/defaults/main.yml) with overrides."""
    with open(os.path.join(ROOT, 'roles', 'warmup', 'defaults', 'main.yml')) as handle:
        params = yaml.safe_load(handle)
    params.update(overrides)
    return params


def test_the_role_defaults_are_valid():
    assert warmup_errors(defaults()) == []


@pytest.mark.parametrize('overrides', [
    # Inventory values as strings, the other binary unit forms, the bounds themselves.
    {'warmup_qps': '0.5', 'warmup_duration': '1e-1', 'warmup_max_error_rate': 1, 'warmup_p99_tolerance': 0},
    {'warmup_page_cache_chunk_size': '512KiB', 'warmup_page_cache_reserve': '5%'},
    {'warmup_page_cache_reserve': 0, 'warmup_page_cache_workers': 256, 'warmup_window': '2'},
    {'warmup_traffic_timeout': 1, 'warmup_qps': 10000},
])
def test_valid_values(overrides):
    assert warmup_errors(defaults(**overrides)) == []


ERROR_CASES = [
    ({'warmup_qps': -5}, 'warmup_qps = -5: must be a number above 0 and at most 10000'),
    ({'warmup_qps': 0}, 'warmup_qps = 0: must be a number above 0 and at most 10000'),
    ({'warmup_qps': 10001}, 'warmup_qps = 10001: must be a number above 0 and at most 10000'),
    ({'warmup_duration': 0}, 'warmup_duration = 0: must be a number above 0'),
    ({'warmup_duration': 'inf'}, 'warmup_duration = "inf": must be a number above 0'),
    ({'warmup_duration': True}, 'warmup_duration = true: must be a number above 0'),
    ({'warmup_max_error_rate': 2}, 'warmup_max_error_rate = 2: must be a number at least 0 and at most 1'),
    ({'warmup_p99_tolerance': -0.1}, 'warmup_p99_tolerance = -0.1: must be a number at least 0 and at most 100'),
    ({'warmup_window': 1}, 'warmup_window = 1: must be a whole number of at least 2'),
    ({'warmup_ready_timeout': 1.5}, 'warmup_ready_timeout = 1.5: must be a whole number of at least 1'),
    ({'warmup_log_lines': 'many'}, 'warmup_log_lines = "many": must be a whole number of at least 1'),
    ({'warmup_traffic_timeout': 0},
     'warmup_traffic_timeout = 0: must be null (worked out from the models and the duration) or a whole number of '
     'seconds of at least 1'),
    ({'warmup_page_cache_workers': 0},
     'warmup_page_cache_workers = 0: must be null (chosen per file system) or 1-256'),
    ({'warmup_page_cache_chunk_size': '0'},
     'warmup_page_cache_chunk_size = "0": must be a size above 0 such as 8M or 512K'),
    ({'warmup_page_cache_chunk_size': '10%'},
     'warmup_page_cache_chunk_size = "10%": must be a size above 0 such as 8M or 512K'),
    ({'warmup_page_cache_reserve': 'lots'},
     'warmup_page_cache_reserve = "lots": must be a size with a binary unit such as 1G, or a percentage of MemTotal '
     'such as 5%'),
    ({'warmup_page_cache_reserve': '101%'},
     'warmup_page_cache_reserve = "101%": must be a size with a binary unit such as 1G, or a percentage of MemTotal '
     'such as 5%'),
    ({'warmup_status_file': 'run/warmup.json'}, 'warmup_status_file = "run/warmup.json": must be an absolute path'),
    ({'warmup_model_repository': '/'}, 'warmup_model_repository = "/": must be an absolute path'),
    ({'warmup_endpoints': []},
     'warmup_endpoints = []: one or more http(s)://host:port URLs (at least one is needed)'),
]


@pytest.mark.parametrize('overrides, message', ERROR_CASES)
def test_errors_name_variable_value_and_fix(overrides, message):
    assert warmup_errors(defaults(**overrides)) == [message]


def test_a_bad_endpoint_is_named_with_the_url_parser_message():
    errors = warmup_errors(defaults(warmup_endpoints=['http://127.0.0.1:8000', 'ftp://host:21']))
    assert len(errors) == 1
    assert errors[0].startswith('warmup_endpoints = ["http://127.0.0.1:8000", "ftp://host:21"]: one or more '
                                'http(s)://host:port URLs (')


def test_only_the_variables_given_are_checked():
    """The preflight passes what the inventory sets; the endpoints come later, from triton_compose."""
    assert warmup_errors({'warmup_qps': 2}) == []
    assert warmup_errors({'warmup_endpoints': ['http://127.0.0.1:8000']}) == []


def test_every_problem_at_once():
    assert len(warmup_errors(defaults(warmup_qps=0, warmup_window=0, warmup_status_file='x'))) == 3


def test_input_must_be_a_dict():
    with pytest.raises(AnsibleFilterError, match='must be a dict of warmup_'):
        warmup_errors(['warmup_qps'])
