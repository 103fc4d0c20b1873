# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""README's lists of modules and filter families name exactly what plugins/ holds (they once named 23 of 34
modules and 4 of 19 families)."""

from __future__ import annotations

import glob
import os
import re

ROOT = os.path.join(os.path.dirname(__file__), '..', '..', '..')


def names(folder):
    return set(os.path.basename(path)[:-3] for path in glob.glob(os.path.join(ROOT, 'plugins', folder, '*.py'))
               if not os.path.basename(path).startswith('__'))


def listed(heading):
    """The backticked names of the README paragraph that starts with ``heading``, up to the next blank line."""
    with open(os.path.join(ROOT, 'README.md'), encoding='utf-8') as handle:
        text = handle.read()
    start = text.index(heading)
    end = text.index('\n\n', start)
    return set(re.findall(r'`([a-z0-9_]+)`', text[start:end]))


def test_readme_lists_every_module_and_no_other():
    assert listed('Modules (`plugins/modules`') - {'plugins'} == names('modules')


def test_readme_lists_every_filter_family_and_no_other():
    assert listed('Filter families (`plugins/filter`') - {'plugins'} == names('filter')
