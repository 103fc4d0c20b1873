"""Build and cache the Debian guest images (bookworm by default, trixie for serving).

Every suite shares the recipe (recipe/: customize hook, GRUB config, guest files,
packages.txt); recipe/suites/<suite>.txt adds that suite's own packages. An image is
keyed by a hash of the suite, this builder and the recipe files it uses, so editing
the recipe rebuilds it, an unchanged recipe reuses the cached image, and adding or
editing another suite's list leaves it alone.
"""
import hashlib
import os
import shutil
import subprocess
import tempfile

from . import paths

DEFAULT_SUITE = "bookworm"
# trixie: Debian 13's docker.io 26 and docker-compose 2.26 (Compose v2), which
# community.docker.docker_compose_v2 needs and bookworm does not have.
SUITES = ("bookworm", "trixie")
SUITE_DIR = "suites"
DISK_SIZE = "8G"
PART_OFFSET_SECTORS = 2048
GRUB_MODULES = [
    "biosdisk", "part_msdos", "ext2", "normal", "configfile", "linux",
    "serial", "terminal", "echo", "test", "gzio",
]


def check_suite(suite):
    if suite not in SUITES:
        raise RuntimeError("lab: unknown guest suite %r (known: %s)" % (suite, ", ".join(SUITES)))
    return suite


def suite_packages_file(suite):
    """recipe/suites/<suite>.txt, or None when the suite adds no packages."""
    own = os.path.join(paths.RECIPE_DIR, SUITE_DIR, "%s.txt" % check_suite(suite))
    return own if os.path.exists(own) else None


def recipe_files(suite=DEFAULT_SUITE):
    """The recipe files an image of this suite is built from: the shared ones and its own list."""
    walked = []
    for base, dirs, files in os.walk(paths.RECIPE_DIR):
        # Other suites' lists are not part of this image (pruned in place: os.walk then skips them).
        dirs[:] = [d for d in dirs if os.path.join(base, d) != os.path.join(paths.RECIPE_DIR, SUITE_DIR)]
        walked.append((base, sorted(files)))
    found = [os.path.join(base, name) for base, files in sorted(walked) for name in files]
    own = suite_packages_file(suite)
    return found + ([own] if own else [])


def packages(suite=DEFAULT_SUITE):
    result = []
    for path in [os.path.join(paths.RECIPE_DIR, "packages.txt"), suite_packages_file(suite)]:
        if path is None:
            continue
        with open(path, encoding="utf-8") as handle:
            result.extend(line.strip() for line in handle if line.strip() and not line.startswith("#"))
    return result


def recipe_hash(suite=DEFAULT_SUITE):
    digest = hashlib.sha256(check_suite(suite).encode())
    digest.update(open(__file__, "rb").read())
    for path in recipe_files(suite):
        digest.update(os.path.relpath(path, paths.RECIPE_DIR).encode())
        with open(path, "rb") as handle:
            digest.update(handle.read())
    return digest.hexdigest()[:16]


def image_dir(suite=DEFAULT_SUITE):
    return os.path.join(paths.cache_dir(), "images", recipe_hash(suite))


def ensure_image(rebuild=False, log=print, suite=DEFAULT_SUITE):
    """Return the cached image directory of a suite, building it when missing."""
    target = image_dir(suite)
    if os.path.exists(os.path.join(target, "base.qcow2")) and not rebuild:
        return target
    os.makedirs(os.path.dirname(target), exist_ok=True)
    work = tempfile.mkdtemp(prefix="build-", dir=os.path.dirname(target))
    try:
        _build(work, log, suite)
        if os.path.exists(target):
            shutil.rmtree(target)
        os.rename(work, target)
    finally:
        if os.path.exists(work):
            shutil.rmtree(work, ignore_errors=True)
    return target


def _run(cmd, log_path, **kwargs):
    with open(log_path, "ab") as log_file:
        log_file.write(("$ %s\n" % " ".join(cmd)).encode())
        log_file.flush()
        result = subprocess.run(cmd, stdout=log_file, stderr=subprocess.STDOUT, check=False, **kwargs)
    if result.returncode != 0:
        raise RuntimeError("image build step failed (rc=%d): %s; see %s" % (result.returncode, " ".join(cmd), log_path))


def _build(work, log, suite):
    build_log = os.path.join(work, "build.log")
    rootfs = os.path.join(work, "rootfs")
    key = os.path.join(work, "id_ed25519")
    log("lab: building the %s guest image in %s (log: %s)" % (suite, work, build_log))
    _run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "inferops-lab", "-f", key], build_log)
    hook = "bash %s \"$1\" %s.pub" % (os.path.join(paths.RECIPE_DIR, "customize.sh"), key)
    _run(["mmdebstrap", "--variant=minbase", "--include=" + ",".join(packages(suite)),
          "--customize-hook=" + hook, suite, rootfs], build_log)

    part = os.path.join(work, "root.ext4")
    disk = os.path.join(work, "disk.raw")
    part_bytes = _size_bytes(DISK_SIZE) - PART_OFFSET_SECTORS * 512
    _run(["truncate", "-s", str(part_bytes), part], build_log)
    _run(["mkfs.ext4", "-q", "-F", "-L", "root", "-d", rootfs, part], build_log)
    shutil.rmtree(rootfs)
    _run(["truncate", "-s", DISK_SIZE, disk], build_log)
    _run(["sfdisk", "-q", disk], build_log,
         input=("label: dos\nstart=%d, type=83, bootable\n" % PART_OFFSET_SECTORS).encode())
    _run(["dd", "if=" + part, "of=" + disk, "bs=1M", "seek=1", "conv=notrunc,sparse", "status=none"], build_log)
    os.unlink(part)
    _install_grub(work, disk, build_log)
    _run(["qemu-img", "convert", "-O", "qcow2", disk, os.path.join(work, "base.qcow2")], build_log)
    os.unlink(disk)


def _install_grub(work, disk, build_log):
    """Embed GRUB in the MBR gap, as grub-install would on a real disk.

    boot.img points at LBA 1 and core.img's first blocklist defaults to the
    sectors right after it, so both are copied verbatim.
    """
    core = os.path.join(work, "core.img")
    _run(["grub-mkimage", "-O", "i386-pc", "-o", core, "-p", "(hd0,msdos1)/boot/grub"] + GRUB_MODULES,
         build_log)
    if os.path.getsize(core) > (PART_OFFSET_SECTORS - 1) * 512:
        raise RuntimeError("core.img does not fit the MBR gap")
    _run(["dd", "if=/usr/lib/grub/i386-pc/boot.img", "of=" + disk, "bs=440", "count=1",
          "conv=notrunc", "status=none"], build_log)
    _run(["dd", "if=" + core, "of=" + disk, "bs=512", "seek=1", "conv=notrunc", "status=none"], build_log)
    os.unlink(core)


def _size_bytes(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(text[:-1]) * units[text[-1]] if text[-1] in units else int(text)
