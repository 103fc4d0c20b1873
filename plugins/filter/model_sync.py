# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""model_sync filters: the models list rule of module_utils/model_sync/manifest.py, for the role's validation.

The documentation of each filter lives next to this file in ``<filter name>.yml``.
"""

from __future__ import annotations

from ansible_collections.inferops.node.plugins.module_utils.model_sync.manifest import model_errors


def model_sync_models_errors(value, name='model_sync_models'):
    """Problems of a models list, each naming the entry, key, value and the fix (empty list = valid)."""
    return model_errors(value, name)


class FilterModule(object):
    """model_sync filters."""

    def filters(self):
        return {'model_sync_models_errors': model_sync_models_errors}
