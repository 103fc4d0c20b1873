"""Boot, reach and stop QEMU/TCG guests.

KVM on this kind of host cannot boot a stock kernel, so guests run under TCG.
Each guest gets its own -uuid (so its NVMe host NQN is unique), its SSH port
forwarded on 127.0.0.1 and its console captured to a log file.
"""
import os
import signal
import socket
import subprocess
import time
import uuid

USER_MAC = "52:54:00:00:00:01"
LINK_PCI_ADDR = "0x10"  # the guest names this NIC enp0s16
LINK_NETDEV = "enp0s16"
MQ_PCI_ADDR = "0x11"  # the guest names this NIC enp0s17 (PCI 0000:00:11.0)
MQ_NETDEV = "enp0s17"
MQ_PCI_ADDRESS = "0000:00:11.0"


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def link_mac(index):
    return "52:54:00:77:00:%02x" % (index + 1)


def mq_mac(index):
    return "52:54:00:88:00:%02x" % (index + 1)


def mq_tap(guest):
    """A host tap name unique to this guest (IFNAMSIZ: at most 15 characters)."""
    return "imq" + guest["uuid"].replace("-", "")[:10]


def console_path(rundir, name):
    """Where QEMU writes a guest's serial console (kept after the guest is stopped)."""
    return os.path.join(rundir, "%s-console.log" % name)


def qemu_command(guest, index, rundir, image, link_ports):
    """The full QEMU argument list for one guest."""
    name = guest["name"]
    overlay = os.path.join(rundir, "%s-root.qcow2" % name)
    # One host thread per guest runs all its vCPUs in turn (thread=single): CI runs three or four
    # guests and the host stages on 2 cores, where multi-threaded TCG's vCPU threads wait for each
    # other at every cross-CPU TLB flush while the host has descheduled one of them. Measured on
    # 2026-12-04, three 2-vCPU guests each running 37 tasks (update-initramfs among them) beside one
    # busy host process: 474 s with thread=multi, 385 s with thread=single; boot 77 s and 69 s.
    cmd = [
        "qemu-system-x86_64", "-name", name, "-uuid", guest["uuid"],
        "-machine", "q35", "-accel", "tcg,thread=single", "-cpu", "max",
        "-smp", str(guest["cpus"]), "-m", str(guest["memory"]),
        "-display", "none", "-serial", "file:" + console_path(rundir, name),
        "-daemonize", "-pidfile", os.path.join(rundir, "%s.pid" % name),
        "-drive", "file=%s,if=virtio,format=qcow2,cache=unsafe,discard=unmap" % overlay,
        "-netdev", "user,id=user0,hostfwd=tcp:127.0.0.1:%d-:22" % guest["ssh_port"],
        "-device", "virtio-net-pci,netdev=user0,mac=" + USER_MAC,
        "-fw_cfg", "name=opt/inferops/hostname,string=" + name,
    ]
    for drive_index, drive in enumerate(guest["nvme"]):
        path = os.path.join(rundir, "%s-nvme%d.qcow2" % (name, drive_index))
        cmd += ["-drive", "file=%s,if=none,id=nvme%d,format=qcow2,cache=unsafe,discard=unmap" % (path, drive_index),
                "-device", "nvme,serial=%s,drive=nvme%d" % (drive["serial"], drive_index)]
    if guest["link_ip"]:
        local, remote = link_ports
        cmd += ["-netdev", "dgram,id=link0,local.type=inet,local.host=127.0.0.1,local.port=%d,"
                "remote.type=inet,remote.host=127.0.0.1,remote.port=%d" % (local, remote),
                "-device", "virtio-net-pci,netdev=link0,mac=%s,addr=%s" % (link_mac(index), LINK_PCI_ADDR),
                "-fw_cfg", "name=opt/inferops/link_ip,string=" + guest["link_ip"],
                "-fw_cfg", "name=opt/inferops/link_mac,string=" + link_mac(index)]
    if guest["mq_nic_queues"]:
        # A multi-queue virtio NIC for the NIC queue tests (RPS/XPS, per-queue IRQs). Slirp (user)
        # netdevs are single-queue, so it is a tap, created by QEMU (root) and left unconnected on
        # the host: the guest sees a NIC with that many queue pairs and one MSI-X vector per queue
        # (2 per pair, plus config and control).
        queues = guest["mq_nic_queues"]
        cmd += ["-netdev", "tap,id=mq0,ifname=%s,script=no,downscript=no,queues=%d" % (mq_tap(guest), queues),
                "-device", "virtio-net-pci,netdev=mq0,mq=on,vectors=%d,mac=%s,addr=%s" % (
                    2 * queues + 2, mq_mac(index), MQ_PCI_ADDR)]
    return cmd


def create_disks(guest, rundir, image):
    name = guest["name"]
    subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", "-F", "qcow2", "-b",
                    os.path.join(image, "base.qcow2"), os.path.join(rundir, "%s-root.qcow2" % name)], check=True)
    for drive_index, drive in enumerate(guest["nvme"]):
        subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2",
                        os.path.join(rundir, "%s-nvme%d.qcow2" % (name, drive_index)), drive["size"]], check=True)


def start(guest, index, rundir, image, link_ports):
    guest.setdefault("uuid", str(uuid.uuid4()))
    guest.setdefault("ssh_port", free_port())
    create_disks(guest, rundir, image)
    cmd = qemu_command(guest, index, rundir, image, link_ports)
    with open(os.path.join(rundir, "%s-qemu.cmd" % guest["name"]), "w", encoding="utf-8") as handle:
        handle.write(" ".join(cmd) + "\n")
    subprocess.run(cmd, check=True)
    with open(os.path.join(rundir, "%s.pid" % guest["name"]), encoding="utf-8") as handle:
        guest["pid"] = int(handle.read().strip())


def ssh_base(guest, key, connect_timeout=60):
    """The ssh argv to the guest. ConnectTimeout also bounds the wait for sshd's banner, and QEMU's
    port forward accepts at once: on a loaded host a booted guest's sshd took more than the 5 s this
    was until stop 38 (a `triton-load` failed with rc 255 after 11 s), so 60 s, as the lab inventory's
    ansible_ssh_timeout. LogLevel=ERROR, not -q: a failure says why."""
    return ["ssh", "-i", key, "-p", str(guest["ssh_port"]), "-o", "LogLevel=ERROR",
            "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
            "-o", "ConnectTimeout=%d" % connect_timeout, "-o", "BatchMode=yes",
            "-o", "ServerAliveInterval=15", "-o", "ServerAliveCountMax=3", "root@127.0.0.1"]


def alive(pid):
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return True


def wait_ssh(guest, key, timeout):
    """Wait until the guest answers over SSH; False if it died or timed out."""
    deadline = time.monotonic() + timeout
    # While the guest boots a probe hangs until its ConnectTimeout (the port forward accepts, nothing
    # answers): short probes first, then longer ones, so a booted guest's slow sshd still gets its 60 s.
    connect_timeout = 10
    while time.monotonic() < deadline:
        if not alive(guest["pid"]):
            return False
        try:
            probe = subprocess.run(ssh_base(guest, key, connect_timeout) + ["true"], check=False,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                   timeout=connect_timeout + 30)
        except subprocess.TimeoutExpired:
            probe = None
        if probe is not None and probe.returncode == 0:
            return True
        connect_timeout = min(connect_timeout + 10, 60)
        time.sleep(2)
    return False


def stop(guest, timeout=20):
    pid = guest.get("pid")
    if not pid or not alive(pid):
        return
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    if alive(pid):
        os.kill(pid, signal.SIGKILL)
