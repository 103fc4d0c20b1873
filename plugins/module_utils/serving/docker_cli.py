# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the docker CLI says about the engine on a host: the client, the daemon, the Compose v2
plugin and the daemon's settings, each from the CLI's JSON output.

Read by the docker_engine_info module (the roles docker_engine and triton_compose through it).
The docker CLI prints its JSON and still exits 1 when the daemon does not answer
(``"Server": null``, or ``docker info``'s ``ServerErrors``), so output is parsed whatever the
exit status, and the reason is kept from standard error.
"""

from __future__ import annotations

import json

VERSION_ARGS = ['docker', 'version', '--format', '{{json .}}']
INFO_ARGS = ['docker', 'info', '--format', '{{json .}}']
COMPOSE_VERSION_ARGS = ['docker', 'compose', 'version', '--format', 'json']


def _json_object(text):
    """The JSON object the CLI printed (its first line holding one), or None."""
    for line in (text or '').splitlines():
        line = line.strip()
        if line.startswith('{'):
            try:
                value = json.loads(line)
            except ValueError:
                return None
            return value if isinstance(value, dict) else None
    return None


def _reason(rc, err, out=''):
    """The CLI's own first line (it follows a refusal with its usage text), else the exit status."""
    for text in (err, out):
        lines = [line.strip() for line in (text or '').splitlines() if line.strip()]
        if lines:
            return lines[0]
    return 'exit status %d' % rc


def parse_version(rc, out, err):
    """(client, server) from `docker version --format '{{json .}}'`.

    client: {'version', 'api_version'}; server: {'running', 'version', 'api_version', 'error'}."""
    value = _json_object(out) or {}
    client = value.get('Client') or {}
    server = value.get('Server') or {}
    running = rc == 0 and bool(server.get('Version'))
    return (
        {'version': client.get('Version'), 'api_version': client.get('ApiVersion')},
        {'running': running, 'version': server.get('Version'), 'api_version': server.get('ApiVersion'),
         'error': None if running else _reason(rc, err, '' if value else out)},
    )


def parse_compose_version(rc, out, err):
    """{'installed', 'version', 'v2', 'error'} from `docker compose version --format json`.

    Without the plugin the CLI takes `compose` for an unknown word and refuses `--format`."""
    value = _json_object(out) or {}
    version = value.get('version') if rc == 0 else None
    return {'installed': bool(version), 'version': version,
            'v2': bool(version) and version.lstrip('v').startswith('2.'),
            'error': None if version else _reason(rc, err, out)}


def parse_info(rc, out, err):
    """(info, error) from `docker info --format '{{json .}}'`: the daemon's settings as docker prints
    them ({} when nothing could be read), and why they are missing (None when the daemon answered)."""
    value = _json_object(out)
    if value is None:
        return {}, _reason(rc, err, out)
    if value.get('ServerVersion'):
        return value, None
    errors = value.get('ServerErrors') or []
    return value, '; '.join(errors) if errors else _reason(rc, err)
