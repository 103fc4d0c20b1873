"""Stand-in for get-pip.py used by ansible-test when its download host is unreachable.

It downloads the pip wheel from the package index and runs pip from inside
that wheel to install itself, which is what get-pip.py does.
"""
import json
import os
import runpy
import sys
import tempfile
import urllib.request

PIP_VERSION = os.environ.get("GET_PIP_VERSION", "24.2")


def wheel_url(version):
    index = os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple").rstrip("/")
    if index.endswith("/simple"):
        index = index[: -len("/simple")]
    with urllib.request.urlopen("%s/pypi/pip/%s/json" % (index, version)) as resp:
        release = json.load(resp)
    for item in release["urls"]:
        if item["packagetype"] == "bdist_wheel":
            return item["url"]
    raise SystemExit("no pip %s wheel found" % version)


def main():
    target = tempfile.mkdtemp()
    wheel = os.path.join(target, "pip-%s-py3-none-any.whl" % PIP_VERSION)
    urllib.request.urlretrieve(wheel_url(PIP_VERSION), wheel)
    sys.path.insert(0, wheel)
    sys.argv = ["pip", "install", "--disable-pip-version-check", wheel] + sys.argv[1:]
    runpy.run_module("pip", run_name="__main__")


if __name__ == "__main__":
    main()
