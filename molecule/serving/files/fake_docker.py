# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Stand-in ``docker`` CLI for molecule/serving: a docker engine with compose v2.29.

There is no docker engine on the test host, so the triton_compose deploy path
(engine detection, ``community.docker.docker_compose_v2`` in check mode) runs against
this script. It answers the calls a check-mode ``up`` makes, with an empty project
(no containers, no images, no dry-run events), and appends every invocation's
arguments as one JSON line to ``$FAKE_DOCKER_LOG`` so the scenario can assert what
the role asked for. Anything else exits 1 with a message, like a real CLI would.
"""

import json
import os
import sys

GLOBAL_WITH_VALUE = {'--host', '-H', '--context', '-c', '--config', '--log-level', '-l',
                     '--tlscacert', '--tlscert', '--tlskey'}
GLOBAL_FLAGS = {'--tls', '--tlsverify', '--debug', '-D'}
COMPOSE_WITH_VALUE = {'--ansi', '--progress', '--project-directory', '--project-name', '-p',
                      '--file', '-f', '--env-file', '--profile'}


def strip(args, with_value, flags=()):
    """Drop leading options; return (options, rest)."""
    opts = []
    while args and args[0].startswith('-'):
        if args[0] in with_value:
            opts.extend(args[:2])
            args = args[2:]
        elif args[0] in flags or '=' in args[0]:
            opts.append(args[0])
            args = args[1:]
        else:
            break
    return opts, args


def main(argv):
    log = os.environ.get('FAKE_DOCKER_LOG')
    if log:
        with open(log, 'a') as handle:
            handle.write(json.dumps(argv) + '\n')
    dummy, args = strip(list(argv), GLOBAL_WITH_VALUE, GLOBAL_FLAGS)
    if not args:
        return 1
    if args[0] == 'version':
        fmt = args[args.index('--format') + 1] if '--format' in args else ''
        info = {'Client': {'Version': '27.3.1', 'ApiVersion': '1.47'},
                'Server': {'Version': '27.3.1', 'ApiVersion': '1.47', 'MinAPIVersion': '1.24',
                           'Os': 'linux', 'Arch': 'amd64'}}
        print(json.dumps(info['Server']['Version'] if 'Server.Version' in fmt else info))
        return 0
    if args[0] == 'compose':
        dummy, rest = strip(args[1:], COMPOSE_WITH_VALUE)
        if rest[:1] == ['version']:
            print(json.dumps({'version': 'v2.29.7'}))
            return 0
        if rest[:1] == ['ps']:
            return 0
        if rest[:1] == ['images']:
            print('[]')
            return 0
        if rest[:1] in (['up'], ['restart'], ['stop'], ['down']) and '--dry-run' in rest:
            return 0
        if rest[:1] == ['logs']:
            return 0
    sys.stderr.write('fake docker: unsupported call: %s\n' % ' '.join(argv))
    return 1


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
