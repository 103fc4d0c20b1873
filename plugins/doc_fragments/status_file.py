# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The status interval of the modules that write a progress file for an async job (page_cache, triton_warmup,
model_sync; each documents its own O(status_file) and its keys). Their argument spec is
``status_file.ARGUMENT_SPEC``."""

from __future__ import annotations


class ModuleDocFragment(object):

    DOCUMENTATION = r'''
options:
  status_interval:
    description:
      - Seconds between two writes of O(status_file). Must be greater than 0.
    type: float
    default: 1.0
'''
