# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A role's variables against its meta/argument_specs.yml, as short messages.

ansible.builtin.validate_argument_spec fails with the whole spec in its result
(about 60 lines on screen) and names a bad value inside a list of mappings only
by the list ("found in md_raid_xfs_arrays"). The preflight needs one line per
problem that names the entry: ``md_raid_xfs_arrays[1] (name=index): value of
level must be one of: 0, 1, 10, got: 5``.
"""

from __future__ import annotations

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.module_utils.parsing.convert_bool import boolean

# Keys of an entry that say which one it is, in the order they are tried.
_ENTRY_LABELS = ('name', 'selector', 'mount', 'path', 'traddr', 'nqn', 'subnqn', 'address')


def is_boolean(value):
    """True for what Ansible's own bool conversion accepts (true, "yes", "on", 1, "0", ...)."""
    try:
        boolean(value, strict=True)
    except TypeError:
        return False
    return True


def _spec(options):
    """argument_specs.yml options -> an argument spec the validator takes."""
    return {name: dict(option or {}) for name, option in (options or {}).items()}


def _nested_lists(spec):
    """Options that are lists of mappings with their own options."""
    return {name: option for name, option in spec.items()
            if option.get('type') == 'list' and option.get('elements') == 'dict' and option.get('options')}


def _label(entry):
    if isinstance(entry, dict):
        for key in _ENTRY_LABELS:
            if isinstance(entry.get(key), (str, int)) and not isinstance(entry.get(key), bool):
                return ' (%s=%s)' % (key, entry[key])
    return ''


def _messages(spec, params):
    result = ArgumentSpecValidator(spec).validate(params)
    messages = [str(message) for message in result.error_messages]
    # The validator reports a failed conversion twice, once without the option's name.
    return [m for m in messages if not any(m != other and m in other for other in messages)]


def argument_errors(options, provided):
    """One message per problem of ``provided`` (name -> value) against the role's ``options``.

    Only the variables given are checked (the role's defaults are trusted); an
    entry of a list of mappings is checked on its own, so its message says
    which entry it is.
    """
    spec = _spec(options)
    provided = dict(provided or {})
    nested = _nested_lists(spec)
    # Required options the inventory leaves to the role's defaults are not errors here.
    top = {name: dict(option, required=False) for name, option in spec.items() if name in provided}
    errors = []
    # Variables the role does not know are the misspelt-variable check's to report.
    # A problem inside an entry of a list of mappings ("... found in <list>", or an unknown key as
    # "<list>.<key>. Supported parameters include ...") is reported below, with the entry named.
    for message in _messages(top, dict((name, value) for name, value in provided.items() if name in spec)):
        if not any(message.endswith('found in %s' % name) or message.startswith('%s.' % name) for name in nested):
            errors.append(message)
    for name, option in nested.items():
        entries = provided.get(name)
        if not isinstance(entries, list):
            continue
        for index, entry in enumerate(entries):
            if not isinstance(entry, dict):
                continue  # the whole-list check above reported the type
            for message in _messages(_spec(option['options']), entry):
                errors.append('%s[%d]%s: %s' % (name, index, _label(entry), message))
    return errors
