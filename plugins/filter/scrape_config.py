# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""scrape_config filter: Prometheus's configuration for the serving nodes (module_utils/health/scrape_config.py).

The documentation of the filter lives next to this file in ``scrape_config.yml``.
"""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.node.plugins.module_utils.health import scrape_config as rules


def scrape_config(hosts, rule_files=None, scrape_interval='30s', node_exporter_port=9100):
    """``{'config': prometheus.yml as a dict, 'problems': [...]}`` of ``hosts``."""
    if not isinstance(hosts, list) or not all(isinstance(h, dict) and h.get('name') and h.get('address') for h in hosts):
        raise AnsibleFilterError('scrape_config: the input must be a list of {name, address, node_exporter, '
                                 'triton_compose_params}, got %r' % (hosts,))
    document, problems = rules.config(hosts, rule_files, scrape_interval, int(node_exporter_port))
    return {'config': document, 'problems': problems}


class FilterModule(object):
    """scrape_config filter."""

    def filters(self):
        return {'scrape_config': scrape_config}
