# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Attributes every read-only ``*_info`` module shares (each adds its own ``platform``)."""

from __future__ import annotations


class ModuleDocFragment(object):

    DOCUMENTATION = r'''
attributes:
  check_mode:
    description: Reads only; runs the same in check mode.
    support: full
  diff_mode:
    description: Changes nothing, so returns no diff.
    support: none
'''
