# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rules on the warmup role's variables, one message per problem naming the variable, the value and the fix.

``errors(params)`` checks each ``warmup_*`` variable that ``params`` holds, and only those: the preflight
checks what the inventory sets (durations, rates, counts, sizes, status files) before any role changes
anything, while the endpoints and the model repository - which the serving play takes from what
triton_compose deployed - are checked when the role runs. Used by the filter ``warmup_errors``.
"""

from __future__ import annotations

import math

from ansible_collections.inferops.node.plugins.module_utils.common.messages import shown, text
from ansible_collections.inferops.node.plugins.module_utils.storage.page_cache import PageCacheError, parse_size
from ansible_collections.inferops.node.plugins.module_utils.serving.triton_v2 import url_errors

__all__ = ['errors']

# (variable, lowest, highest, whether the lowest is excluded): numbers of seconds, requests per second, ratios.
_RANGES = (
    ('warmup_duration', 0, None, True),
    ('warmup_qps', 0, 10000, True),
    ('warmup_p99_tolerance', 0, 100, False),
    ('warmup_max_error_rate', 0, 1, False),
)
# (variable, lowest): whole numbers.
_COUNTS = (
    ('warmup_page_cache_timeout', 1),
    ('warmup_progress_interval', 1),
    ('warmup_window', 2),
    ('warmup_ready_timeout', 1),
    ('warmup_log_lines', 1),
)
_PATHS = ('warmup_model_repository', 'warmup_status_file', 'warmup_traffic_status_file')


def _number(value):
    """The value as a float, or None when it is not a finite number (a bool is not one)."""
    if isinstance(value, bool):
        return None
    try:
        number = float(text(value))
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def _whole(value):
    number = _number(value)
    return int(number) if number is not None and number == int(number) else None


def _range_error(key, value, low, high, open_low):
    number = _number(value)
    if number is not None and (number > low if open_low else number >= low) and (high is None or number <= high):
        return None
    bounds = ('above %s' % low if open_low else 'at least %s' % low) + ('' if high is None else ' and at most %s' % high)
    return '%s = %s: must be a number %s' % (key, shown(value), bounds)


def _size_error(key, value, percent):
    try:
        size = parse_size(value, key, total=1 if percent else None)
    except PageCacheError:
        size = None
    if size is None or (not percent and size <= 0):
        what = 'a size with a binary unit such as 1G, or a percentage of MemTotal such as 5%' if percent \
            else 'a size above 0 such as 8M or 512K'
        return '%s = %s: must be %s' % (key, shown(value), what)
    return None


def errors(params):
    """Every problem of the ``warmup_*`` variables in ``params`` (empty list = valid)."""
    out = []
    for key, low, high, open_low in _RANGES:
        if key in params:
            out.append(_range_error(key, params[key], low, high, open_low))
    for key, low in _COUNTS:
        if key in params:
            count = _whole(params[key])
            if count is None or count < low:
                out.append('%s = %s: must be a whole number of at least %d' % (key, shown(params[key]), low))
    if 'warmup_traffic_timeout' in params and params['warmup_traffic_timeout'] is not None:
        count = _whole(params['warmup_traffic_timeout'])
        if count is None or count < 1:
            out.append('warmup_traffic_timeout = %s: must be null (worked out from the models and the duration) '
                       'or a whole number of seconds of at least 1' % shown(params['warmup_traffic_timeout']))
    if 'warmup_page_cache_workers' in params and params['warmup_page_cache_workers'] is not None:
        workers = _whole(params['warmup_page_cache_workers'])
        if workers is None or not 1 <= workers <= 256:
            out.append('warmup_page_cache_workers = %s: must be null (chosen per file system) or 1-256'
                       % shown(params['warmup_page_cache_workers']))
    if 'warmup_page_cache_chunk_size' in params:
        out.append(_size_error('warmup_page_cache_chunk_size', params['warmup_page_cache_chunk_size'], False))
    if 'warmup_page_cache_reserve' in params:
        out.append(_size_error('warmup_page_cache_reserve', params['warmup_page_cache_reserve'], True))
    for key in _PATHS:
        if key in params:
            value = params[key]
            if not isinstance(value, str) or not value.startswith('/') or len(value) < 2:
                out.append('%s = %s: must be an absolute path' % (key, shown(value)))
    if 'warmup_endpoints' in params:
        endpoints = params['warmup_endpoints']
        problems = [] if isinstance(endpoints, list) and endpoints else ['at least one is needed']
        if isinstance(endpoints, list):
            problems.extend(problem for url in endpoints for problem in url_errors(url))
        if problems:
            out.append('warmup_endpoints = %s: one or more http(s)://host:port URLs (%s)'
                       % (shown(endpoints), '; '.join(problems)))
    return [problem for problem in out if problem]
