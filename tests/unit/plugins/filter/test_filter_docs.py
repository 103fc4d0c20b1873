# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every filter the collection registers has its documentation file (plugins/filter/<name>.yml)."""

from __future__ import annotations

import importlib
import os

import pytest
import yaml

from ansible_collections.inferops.node.plugins import filter as filter_package

FILTER_DIR = os.path.dirname(filter_package.__file__)
MODULES = sorted(name[:-3] for name in os.listdir(FILTER_DIR) if name.endswith('.py') and name != '__init__.py')
FILTERS = sorted(
    (module, name)
    for module in MODULES
    for name in importlib.import_module('ansible_collections.inferops.node.plugins.filter.' + module)
    .FilterModule().filters()
)


def test_filters_found():
    assert {'cpulist_compact', 'role_argument_errors', 'boolean_errors'} <= {name for dummy, name in FILTERS}


@pytest.mark.parametrize('module, name', FILTERS)
def test_every_filter_has_documentation(module, name):
    with open(os.path.join(FILTER_DIR, name + '.yml')) as handle:
        doc = yaml.safe_load(handle)
    assert doc['DOCUMENTATION']['name'] == name
    assert '_input' in doc['DOCUMENTATION']['options']
    assert doc['EXAMPLES'] and doc['RETURN']['_value']
