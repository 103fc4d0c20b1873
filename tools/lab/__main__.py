"""inferops-lab: build the guest image, boot lab guests, write their inventory, tear them down."""
import argparse
import json
import os
import shutil
import subprocess
import sys

import yaml

from . import guest as qemu
from . import image
from . import paths
from . import spec as labspec
from . import triton_image

STATE = "state.json"


def log(message):
    print(message, file=sys.stderr, flush=True)


def load_state(lab):
    path = os.path.join(paths.run_dir(lab), STATE)
    if not os.path.exists(path):
        raise SystemExit("lab %s is not running (no %s)" % (lab, path))
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def save_state(lab, state):
    path = os.path.join(paths.run_dir(lab), STATE)
    with open(path + ".tmp", "w", encoding="utf-8") as handle:
        json.dump(state, handle, indent=2)
    os.replace(path + ".tmp", path)


def inventory(state):
    hosts, groups = {}, {}
    for guest in state["guests"]:
        hosts[guest["name"]] = {
            "ansible_host": "127.0.0.1",
            "ansible_port": guest["ssh_port"],
            "ansible_user": "root",
            "ansible_ssh_private_key_file": guest_key(state, guest),
            "ansible_python_interpreter": "/usr/bin/python3",
            # A guest that reboots under an open connection: QEMU's port forward keeps
            # the host side open, so only keepalives notice (3 x 15 s, then the run goes on).
            "ansible_ssh_common_args": "-o ServerAliveInterval=15 -o ServerAliveCountMax=3",
            # Ansible's default 10 s also bounds the wait for sshd's banner, which a busy
            # TCG guest can exceed (QEMU's forward accepts the TCP connection at once).
            "ansible_ssh_timeout": 60,
            "lab_uuid": guest["uuid"],
            "lab_suite": guest["suite"],
            "lab_nvme_serials": [d["serial"] for d in guest["nvme"]],
        }
        if guest["link_ip"]:
            hosts[guest["name"]].update(lab_link_ip=guest["link_ip"].split("/")[0],
                                        lab_link_cidr=guest["link_ip"], lab_link_netdev=qemu.LINK_NETDEV)
        if guest["mq_nic_queues"]:
            hosts[guest["name"]].update(lab_mq_netdev=qemu.MQ_NETDEV, lab_mq_mac=qemu.mq_mac(state["guests"].index(guest)),
                                        lab_mq_pci_address=qemu.MQ_PCI_ADDRESS, lab_mq_queues=guest["mq_nic_queues"])
        for group in guest["groups"]:
            groups.setdefault(group, {"hosts": {}})["hosts"][guest["name"]] = None
    return {"all": {"hosts": hosts, "children": groups}}


def write_instance_config(state, path):
    """Molecule's instance config: how its default driver reaches each guest."""
    config = [{"instance": g["name"], "address": "127.0.0.1", "port": g["ssh_port"], "user": "root",
               "identity_file": guest_key(state, g)} for g in state["guests"]]
    with open(path, "w", encoding="utf-8") as handle:
        yaml.safe_dump(config, handle, default_flow_style=False)


def guest_key(state, guest):
    """Each image has its own SSH key; a state written before suites had one image and key."""
    return guest.get("key", state.get("key"))


def cmd_image(args):
    print(image.ensure_image(rebuild=args.rebuild, log=log, suite=args.suite))


def cmd_triton_image(args):
    data = triton_image.ensure_image(rebuild=args.rebuild, log=log)
    if args.check:
        data = dict(data, check=triton_image.check(data, timeout=args.timeout, log=log))
    print(json.dumps({k: v for k, v in data.items() if k != "packages"} if not args.packages else data, indent=2))


def cmd_triton_load(args):
    state = load_state(args.name)
    guest = find_guest(state, args.guest)
    data = triton_image.ensure_image(log=log)
    print(json.dumps(triton_image.load(data, qemu.ssh_base(guest, guest_key(state, guest)), log=log), indent=2))


def find_guest(state, name):
    guest = next((g for g in state["guests"] if g["name"] == name), None)
    if guest is None:
        raise SystemExit("lab %s has no guest %s" % (state["name"], name))
    return guest


def cmd_up(args):
    guests = labspec.load(path=args.spec) if args.spec else labspec.load(text=args.spec_json)
    rundir = paths.run_dir(args.name)
    if os.path.exists(os.path.join(rundir, STATE)):
        raise SystemExit("lab %s is already up; run 'down' first" % args.name)
    images = {suite: image.ensure_image(log=log, suite=suite) for suite in sorted({g["suite"] for g in guests})}
    for guest in guests:
        guest["image"] = images[guest["suite"]]
        guest["key"] = os.path.join(guest["image"], "id_ed25519")
    os.makedirs(rundir, exist_ok=True)
    state = {"name": args.name, "guests": guests}
    link_ports = [qemu.free_port(), qemu.free_port()]
    linked = [g for g in guests if g["link_ip"]]
    try:
        for index, guest in enumerate(guests):
            ports = None
            if guest["link_ip"]:
                ports = link_ports if guest is linked[0] else link_ports[::-1]
            qemu.start(guest, index, rundir, guest["image"], ports)
            save_state(args.name, state)
            log("lab: %s booting (ssh 127.0.0.1:%d, console %s-console.log)" % (guest["name"], guest["ssh_port"], guest["name"]))
        for guest in guests:
            if not qemu.wait_ssh(guest, guest["key"], args.timeout):
                console = qemu.console_path(rundir, guest["name"])
                raise SystemExit("lab: guest %s did not answer over SSH within %ds; console log: %s\n%s"
                                 % (guest["name"], args.timeout, console, tail(console)))
    except BaseException:
        if not args.keep_on_failure:
            for guest in guests:
                qemu.stop(guest)
            remove_disks(rundir)
            os.unlink(os.path.join(rundir, STATE))
        raise
    inv_path = os.path.join(rundir, "inventory.yml")
    with open(inv_path, "w", encoding="utf-8") as handle:
        yaml.safe_dump(inventory(state), handle, default_flow_style=False)
    if args.instance_config:
        write_instance_config(state, args.instance_config)
    log("lab: %s up: %s" % (args.name, ", ".join(g["name"] for g in guests)))
    print(inv_path)


def cmd_console(args):
    print(tail(qemu.console_path(paths.run_dir(args.name), args.guest), args.lines), end="")


def tail(path, lines=40):
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return "".join(handle.readlines()[-lines:])
    except OSError:
        return "(no console output)"


def remove_disks(rundir):
    for name in os.listdir(rundir):
        if name.endswith(".qcow2"):
            os.unlink(os.path.join(rundir, name))


def cmd_down(args):
    rundir = paths.run_dir(args.name)
    if not os.path.exists(os.path.join(rundir, STATE)):
        log("lab: %s is not up" % args.name)
        return
    state = load_state(args.name)
    for guest in state["guests"]:
        qemu.stop(guest)
    remove_disks(rundir)
    os.unlink(os.path.join(rundir, STATE))
    log("lab: %s down (console logs kept in %s)" % (args.name, rundir))


def cmd_ssh(args):
    state = load_state(args.name)
    guest = find_guest(state, args.guest)
    command = qemu.ssh_base(guest, guest_key(state, guest)) + args.command
    sys.exit(subprocess.run(command, check=False).returncode)


def cmd_status(args):
    state = load_state(args.name)
    for guest in state["guests"]:
        print("%-12s pid=%-8s ssh=127.0.0.1:%d %s" % (guest["name"], guest.get("pid"), guest["ssh_port"],
                                                      "running" if qemu.alive(guest.get("pid", 0)) else "stopped"))


def cmd_clean_images(args):
    keep = {image.image_dir(suite) for suite in image.SUITES}
    base = os.path.join(paths.cache_dir(), "images")
    for name in os.listdir(base) if os.path.isdir(base) else []:
        path = os.path.join(base, name)
        if path not in keep or args.all:
            shutil.rmtree(path)
            log("lab: removed %s" % path)


def parser():
    top = argparse.ArgumentParser(prog="inferops-lab", description=__doc__)
    sub = top.add_subparsers(dest="command", required=True)
    img = sub.add_parser("image", help="build (if missing) and print the cached guest image directory")
    img.add_argument("--rebuild", action="store_true")
    img.add_argument("--suite", choices=image.SUITES, default=image.DEFAULT_SUITE,
                     help="Debian suite of the guest image (trixie: the serving lab, with the container engine)")
    img.set_defaults(func=cmd_image)
    tri = sub.add_parser("triton-image", help="build (if missing) the Triton image archive for docker load "
                                              "and print its image.json (tag, image ID, archive)")
    tri.add_argument("--rebuild", action="store_true")
    tri.add_argument("--check", action="store_true",
                     help="also start its tritonserver on the host (chroot) on a tiny python model until ready")
    tri.add_argument("--timeout", type=int, default=180, help="--check: seconds to wait for readiness")
    tri.add_argument("--packages", action="store_true", help="include the Debian package versions in the output")
    tri.set_defaults(func=cmd_triton_image)
    trl = sub.add_parser("triton-load", help="docker load the Triton image (built if missing) into a running guest "
                                             "over SSH; nothing to do when the guest has its image ID already")
    trl.add_argument("--name", required=True)
    trl.add_argument("guest")
    trl.set_defaults(func=cmd_triton_load)
    up = sub.add_parser("up", help="boot the guests of a spec and write their inventory")
    up.add_argument("--name", required=True)
    source = up.add_mutually_exclusive_group(required=True)
    source.add_argument("--spec", help="YAML spec file (see tools/lab/presets)")
    source.add_argument("--spec-json", help="spec as JSON/YAML text (molecule platforms)")
    # Three TCG guests booting at once on two busy cores (CI's three lanes) took 385-407 s; systemd-networkd
    # alone ran for minutes. The bound catches a guest that never boots, not a slow one.
    up.add_argument("--timeout", type=int, default=int(os.environ.get("INFEROPS_LAB_BOOT_TIMEOUT", "900")))
    up.add_argument("--instance-config", help="also write molecule's instance config file here")
    up.add_argument("--keep-on-failure", action="store_true", help="leave failed guests running for inspection")
    up.set_defaults(func=cmd_up)
    down = sub.add_parser("down", help="stop the guests and delete their disks")
    down.add_argument("--name", required=True)
    down.set_defaults(func=cmd_down)
    ssh = sub.add_parser("ssh", help="run a command on a guest (or log in)")
    ssh.add_argument("--name", required=True)
    ssh.add_argument("guest")
    ssh.add_argument("command", nargs=argparse.REMAINDER)
    ssh.set_defaults(func=cmd_ssh)
    console = sub.add_parser("console", help="print the end of a guest's serial console (kept after down)")
    console.add_argument("--name", required=True)
    console.add_argument("--lines", type=int, default=120)
    console.add_argument("guest")
    console.set_defaults(func=cmd_console)
    status = sub.add_parser("status", help="list the guests of a lab")
    status.add_argument("--name", required=True)
    status.set_defaults(func=cmd_status)
    clean = sub.add_parser("clean-images", help="delete cached images other than the current recipes' (one per suite)")
    clean.add_argument("--all", action="store_true")
    clean.set_defaults(func=cmd_clean_images)
    return top


def main(argv=None):
    args = parser().parse_args(argv)
    try:
        args.func(args)
    except (labspec.SpecError, RuntimeError) as exc:
        raise SystemExit(str(exc)) from exc


if __name__ == "__main__":
    main()
