# -*- coding: utf-8 -*-
# Copyright: inferops.node contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the tests of a module share and only read, made once per pytest process, before ansible-test forks.

ansible-test runs every unit test in a child forked from its pytest worker (its ``ansible_forked`` plugin):
a module- or session-scoped fixture is set up again in each test's child and its value dies with that
child. What takes seconds to make (the info modules' reads on a dozen rebuilt guests, a moto server) was
made once per test instead of once per run: most of the units stage's time.

* ``shared(fixture)`` - decorator: the function makes the value that fixture ``fixture`` returns.
* ``value(fixture)`` - that value, made at first use in this process.
* ``make_for(fixturenames)`` - called by tests/unit/plugins/conftest.py in the worker, before the fork, for
  the fixtures the next test uses: the child then finds the value made. A maker that fails here fails
  again in the test, which reports it.
* ``scratch(name)`` - a directory for a maker, removed when the process that made it exits (a forked
  child leaves through ``os._exit`` and removes nothing).

A plain pytest run (no fork) gets the same values, made once at first use.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile

_MAKERS = {}
_VALUES = {}


def shared(fixture):
    def register(make):
        _MAKERS[fixture] = make
        return make
    return register


def value(fixture):
    if fixture not in _VALUES:
        _VALUES[fixture] = _MAKERS[fixture]()
    return _VALUES[fixture]


def make_for(fixturenames):
    for fixture in fixturenames:
        if fixture in _MAKERS:
            try:
                value(fixture)
            except Exception:  # pylint: disable=broad-except
                pass  # made again in the test's child, where the failure is reported


def scratch(name):
    # Where pytest puts the tests' files (tests/unit/plugins/conftest.py), else the system's temporary directory.
    path = tempfile.mkdtemp(prefix='inferops-%s.' % name, dir=os.environ.get('PYTEST_DEBUG_TEMPROOT'))
    owner = os.getpid()

    def remove():
        if os.getpid() == owner:
            shutil.rmtree(path, ignore_errors=True)
    atexit.register(remove)
    return path
