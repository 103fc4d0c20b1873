"""Lab specs: which guests to boot, with which drives and links.

A spec is YAML (or the equivalent JSON from molecule's platforms list):

    guests:
      - name: node1
        memory: 2048          # MiB
        cpus: 2
        groups: [local_nvme]
        nvme:                 # one emulated controller + namespace each
          - {serial: LABMODEL0, size: 1G}
        link_ip: 10.77.0.11/24   # optional NIC on the private link (enp0s16)
        mq_nic_queues: 2      # optional multi-queue virtio NIC (enp0s17, PCI 0000:00:11.0),
                              # this many queue pairs; not connected to anything
        suite: bookworm       # guest image: bookworm (default) or trixie (Debian 13, with
                              # docker.io and the Compose v2 plugin: the serving lab)
"""
import json
import re

import yaml

from . import image

NAME_RE = re.compile(r"^[a-z][a-z0-9-]{0,30}$")
SIZE_RE = re.compile(r"^[0-9]+[KMG]$")
SERIAL_RE = re.compile(r"^[A-Za-z0-9_-]{1,20}$")
DEFAULTS = {"memory": 2048, "cpus": 2, "groups": [], "nvme": [], "link_ip": None, "mq_nic_queues": 0,
            "suite": image.DEFAULT_SUITE}


class SpecError(ValueError):
    pass


def load(path=None, text=None):
    """Parse and validate a spec from a file or a YAML/JSON string."""
    if path:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    data = yaml.safe_load(text)
    guests = data["guests"] if isinstance(data, dict) else data
    return validate(guests)


def validate(guests):
    if not isinstance(guests, list) or not guests:
        raise SpecError("spec: 'guests' must be a non-empty list")
    result, serials = [], set()
    for raw in guests:
        guest = dict(DEFAULTS)
        guest.update({k: v for k, v in raw.items() if k in DEFAULTS or k == "name"})
        if not NAME_RE.match(str(guest.get("name", ""))):
            raise SpecError("spec: bad guest name %r" % guest.get("name"))
        drives = []
        for index, drive in enumerate(guest["nvme"] or []):
            serial = str(drive.get("serial", "%sNVME%d" % (guest["name"].upper().replace("-", ""), index)))
            size = str(drive.get("size", "1G"))
            if not SERIAL_RE.match(serial) or serial in serials:
                raise SpecError("spec: guest %s: bad or duplicate NVMe serial %r" % (guest["name"], serial))
            if not SIZE_RE.match(size):
                raise SpecError("spec: guest %s: bad NVMe size %r" % (guest["name"], size))
            serials.add(serial)
            drives.append({"serial": serial, "size": size})
        guest["nvme"] = drives
        queues = guest["mq_nic_queues"] or 0
        if isinstance(queues, bool) or not isinstance(queues, int) or not 0 <= queues <= 8:
            raise SpecError("spec: guest %s: mq_nic_queues must be 0 (none) to 8, got %r" % (guest["name"], queues))
        guest["mq_nic_queues"] = queues
        if guest["suite"] not in image.SUITES:
            raise SpecError("spec: guest %s: suite must be one of %s, got %r"
                            % (guest["name"], ", ".join(image.SUITES), guest["suite"]))
        result.append(guest)
    if len({g["name"] for g in result}) != len(result):
        raise SpecError("spec: guest names must be unique")
    if sum(1 for g in result if g["link_ip"]) not in (0, 2):
        raise SpecError("spec: the private link joins exactly two guests")
    return result


def dumps(guests):
    return json.dumps(guests, indent=2, sort_keys=True)
