"""Stand-in for get-pip.py, which ansible-test downloads from a host this network cannot reach.

Like get-pip.py, it runs a pip from inside a wheel to install the requested
packages (ansible-test passes e.g. ``pip==24.2 --no-setuptools --no-wheel``).
The bootstrapping wheel is the one ensurepip bundles with the interpreter, so
nothing but the package index is needed.
"""
import glob
import os
import runpy
import sys

GET_PIP_ONLY_OPTIONS = {"--no-setuptools", "--no-wheel", "--no-pip"}


def bundled_pip_wheel():
    import ensurepip  # pylint: disable=import-outside-toplevel

    bundled = os.path.join(os.path.dirname(ensurepip.__file__), "_bundled")
    wheels = sorted(glob.glob(os.path.join(bundled, "pip-*.whl")))
    wheels += sorted(glob.glob("/usr/share/python-wheels/pip-*.whl"))
    if not wheels:
        raise SystemExit("get-pip stand-in: no bundled pip wheel found (install python3-venv)")
    return wheels[0]


def main():
    args = [arg for arg in sys.argv[1:] if arg not in GET_PIP_ONLY_OPTIONS]
    if not any(arg.split("==")[0] == "pip" for arg in args):
        args.append("pip")
    sys.path.insert(0, bundled_pip_wheel())
    sys.argv = ["pip", "install", "--disable-pip-version-check"] + args
    runpy.run_module("pip", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
