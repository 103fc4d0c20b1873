"""Build and cache the lab's Triton container image (no registry is reachable from the lab).

The image is a Debian root filesystem (mmdebstrap, minbase) with Python, numpy < 2 and curl
(the compose healthcheck), plus the CPU tritonserver that the nvidia-pytriton wheel ships,
laid out as in NVIDIA's NGC image: /opt/tritonserver/{bin,lib,backends/python,caches/local}.
It is written as a `docker save` archive (one layer, its config with the environment and
labels, the tag in manifest.json) for `docker load`, keyed by a hash of its content: this
builder, the suite, the package list and every file taken from the wheel. An unchanged key
reuses the cache. The config's times are fixed, so the image ID (the config's digest) follows
from the layer: a guest that already has it is left alone (load()).

It is built on the host and loaded into a lab guest over SSH: under TCG a guest computes about
ten times slower than the host, and a guest has no package mirror to run mmdebstrap against.

The suite is bookworm whatever the guest runs: its numpy is 1.24 (the python backend stub
needs numpy < 2; trixie has 2.x) and its Python 3.11 has a stub in the wheel.

    tools/inferops-lab triton-image            # build if missing, print image.json
    tools/inferops-lab triton-image --check    # and start tritonserver from it on the host
    tools/inferops-lab triton-load --name LAB GUEST   # docker load it into a running lab guest
"""
import hashlib
import importlib.metadata
import importlib.util
import inspect
import io
import json
import os
import shlex
import shutil
import signal
import subprocess
import tarfile
import tempfile
import time
import urllib.error
import urllib.request

from . import guest as qemu
from . import image
from . import paths

SUITE = "bookworm"
PYTHON_VERSION = "3.11"
PACKAGES = ["python3", "python3-numpy", "libpython3.11", "curl", "ca-certificates"]
# The server version of the tritonserver in nvidia-pytriton 0.7.0; --check refuses an
# image whose server reports another one, so the tag stays true to its content.
TRITON_VERSION = "2.51.0"
REPOSITORY = "inferops/tritonserver"
TAG = "%s:%s-cpu" % (REPOSITORY, TRITON_VERSION)
HOME = "/opt/tritonserver"
# What the image's processes get (the config's Env): tritonserver on PATH as
# in the NGC image; the wheel's libraries also through ld.so.conf.d, but the python backend
# stub is started by the server with this environment.
ENV = {
    "PATH": HOME + "/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "LD_LIBRARY_PATH": HOME + "/lib:/usr/lib/x86_64-linux-gnu",
    "PYTHONHOME": "/usr",
}
# Fixed mtimes for the tarball (and mmdebstrap's own reproducibility support), and the
# config's creation time.
SOURCE_DATE_EPOCH = "1735689600"
CREATED = "2025-01-01T00:00:00Z"
LABEL_HASH = "org.inferops.content-hash"

TINY_MODEL_CONFIG = """name: "add_one"
backend: "python"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 4 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 4 ] } ]
instance_group [ { kind: KIND_CPU count: 1 } ]
"""
TINY_MODEL = '''import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        return [pb_utils.InferenceResponse([pb_utils.Tensor(
            "OUTPUT0", pb_utils.get_input_tensor_by_name(r, "INPUT0").as_numpy() + np.int32(1))])
            for r in requests]
'''


def wheel_files():
    """(destination under HOME, source path) of every file taken from nvidia-pytriton."""
    spec = importlib.util.find_spec("pytriton")
    if spec is None:
        raise RuntimeError("triton-image: nvidia-pytriton is not installed (tools/bootstrap.sh, requirements/serving.txt)")
    server = os.path.join(os.path.dirname(spec.origin), "tritonserver")
    libs = os.path.join(os.path.dirname(os.path.dirname(spec.origin)), "nvidia_pytriton.libs")
    stub = os.path.join(server, "python_backend_stubs", PYTHON_VERSION, "triton_python_backend_stub")
    files = [("bin/tritonserver", os.path.join(server, "bin", "tritonserver")),
             ("backends/python/triton_python_backend_stub", stub)]
    for sub in ("backends/python", "caches/local"):
        for name in sorted(os.listdir(os.path.join(server, sub))):
            if os.path.isfile(os.path.join(server, sub, name)):
                files.append(("%s/%s" % (sub, name), os.path.join(server, sub, name)))
    # The wheel's own libpython copies serve the stubs of other Python versions (31 MiB); the
    # 3.11 stub links the image's libpython3.11.
    files += [("lib/" + name, os.path.join(libs, name)) for name in sorted(os.listdir(libs))
              if not name.startswith("libpython")]
    return files


def content_hash(files):
    """What the archive is made of: the build code and settings, and every file from the wheel
    (not --check's code: changing the check does not rebuild the image)."""
    digest = hashlib.sha256()
    digest.update("".join(inspect.getsource(f) for f in (_build, image_config, _write_archive)).encode())
    digest.update(json.dumps([SUITE, PACKAGES, TRITON_VERSION, TAG, HOME, ENV, SOURCE_DATE_EPOCH, CREATED,
                              importlib.metadata.version("nvidia-pytriton")]).encode())
    for dest, source in files:
        digest.update(dest.encode())
        with open(source, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()[:16]


def cache_dir(key):
    return os.path.join(paths.cache_dir(), "triton", key)


def image_config(key, layer_sha256):
    """The image config (docker's and OCI's format): environment, working directory, labels,
    the one layer's digest. Fixed times: the same layer gives the same image ID."""
    return {
        "architecture": "amd64",
        "os": "linux",
        "created": CREATED,
        "config": {
            "Env": ["%s=%s" % kv for kv in ENV.items()],
            "WorkingDir": HOME,
            "Labels": {
                LABEL_HASH: key,
                "org.opencontainers.image.version": TRITON_VERSION,
                "org.opencontainers.image.title": "tritonserver (CPU, python backend, from nvidia-pytriton)",
            },
        },
        "rootfs": {"type": "layers", "diff_ids": ["sha256:" + layer_sha256]},
        "history": [{"created": CREATED, "created_by": "tools/inferops-lab triton-image (%s)" % key}],
    }


def _write_archive(path, layer, layer_sha256, config_bytes, config_sha256):
    """A `docker save` archive: manifest.json (tag, config, layer), the config, the layer."""
    layer_name = "%s/layer.tar" % layer_sha256
    manifest = json.dumps([{"Config": config_sha256 + ".json", "RepoTags": [TAG], "Layers": [layer_name]}]).encode()
    mtime = int(SOURCE_DATE_EPOCH)
    with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as archive:
        for name, payload in (("manifest.json", manifest), (config_sha256 + ".json", config_bytes)):
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode = len(payload), mtime, 0o644
            archive.addfile(info, io.BytesIO(payload))
        info = tarfile.TarInfo(layer_sha256)
        info.type, info.mtime, info.mode = tarfile.DIRTYPE, mtime, 0o755
        archive.addfile(info)
        info = tarfile.TarInfo(layer_name)
        info.size, info.mtime, info.mode = os.path.getsize(layer), mtime, 0o644
        with open(layer, "rb") as handle:
            archive.addfile(info, handle)
    return layer_name


def sha256_file(path):
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def ensure_image(rebuild=False, log=print):
    """Return image.json of the cached image, building it when missing."""
    files = wheel_files()
    key = content_hash(files)
    target = cache_dir(key)
    meta = os.path.join(target, "image.json")
    if os.path.exists(meta) and not rebuild:
        with open(meta, encoding="utf-8") as handle:
            return json.load(handle)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    work = tempfile.mkdtemp(prefix="build-", dir=os.path.dirname(target))
    try:
        _build(work, key, files, log)
        if os.path.exists(target):
            shutil.rmtree(target)
        os.rename(work, target)
    finally:
        if os.path.exists(work):
            shutil.rmtree(work, ignore_errors=True)
    with open(meta, encoding="utf-8") as handle:
        data = json.load(handle)
    # Paths point into the final directory, not the build one.
    data["archive"] = os.path.join(target, os.path.basename(data["archive"]))
    data["load_argv"] = ["docker", "load", "-i", data["archive"]]
    with open(meta, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=2)
    return data


def _build(work, key, files, log):
    started = time.monotonic()
    build_log = os.path.join(work, "build.log")
    rootfs = os.path.join(work, "rootfs")
    log("lab: building the Triton image %s (%s) in %s (log: %s)" % (TAG, key, work, build_log))
    # The customize hook copies the wheel's files in, as the NGC image lays them out.
    hook = ["set -e", 'root="$1"']
    for dest, source in files:
        mode = "0755" if os.access(source, os.X_OK) or dest.startswith("bin/") or dest.endswith("_stub") else "0644"
        hook.append("install -D -m %s %s \"$root%s/%s\"" % (mode, shlex.quote(source), HOME, dest))
    hook.append("echo %s/lib >\"$root/etc/ld.so.conf.d/tritonserver.conf\"" % HOME)
    hook.append("chroot \"$root\" ldconfig")
    hook.append("install -d -m 0755 \"$root/models\"")
    env = dict(os.environ, SOURCE_DATE_EPOCH=SOURCE_DATE_EPOCH)
    image._run(["mmdebstrap", "--variant=minbase", "--include=" + ",".join(PACKAGES),
                "--dpkgopt=path-exclude=/usr/share/doc/*", "--dpkgopt=path-exclude=/usr/share/man/*",
                "--dpkgopt=path-exclude=/usr/share/locale/*",
                "--customize-hook=" + "\n".join(hook), SUITE, rootfs], build_log, env=env)
    installed = subprocess.run(["chroot", rootfs, "dpkg-query", "-W", "-f", "${Package} ${Version}\\n"],
                               check=True, capture_output=True, text=True).stdout
    layer = os.path.join(work, "layer.tar")
    # Fixed order, owners and times; no device nodes (the container runtime provides /dev).
    image._run(["tar", "--sort=name", "--numeric-owner", "--mtime=@" + SOURCE_DATE_EPOCH, "--clamp-mtime",
                "--pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime",
                "--exclude=./dev/*", "-C", rootfs, "-cf", layer, "."], build_log)
    shutil.rmtree(rootfs)
    layer_sha256 = sha256_file(layer)
    config_bytes = json.dumps(image_config(key, layer_sha256), sort_keys=True, separators=(",", ":")).encode()
    config_sha256 = hashlib.sha256(config_bytes).hexdigest()
    archive = os.path.join(work, "tritonserver-%s-cpu.docker.tar" % TRITON_VERSION)
    layer_name = _write_archive(archive, layer, layer_sha256, config_bytes, config_sha256)
    os.unlink(layer)
    data = {
        "tag": TAG,
        # What `docker image inspect --format '{{.Id}}' TAG` says once loaded.
        "image_id": "sha256:" + config_sha256,
        "content_hash": key,
        "label": {LABEL_HASH: key},
        "archive": archive,
        "archive_sha256": sha256_file(archive),
        "layer": layer_name,
        "size_bytes": os.path.getsize(archive),
        "suite": SUITE,
        "nvidia_pytriton": importlib.metadata.version("nvidia-pytriton"),
        "triton_version": TRITON_VERSION,
        "env": ENV,
        "load_argv": ["docker", "load", "-i", archive],
        "packages": dict(line.split(" ", 1) for line in installed.splitlines() if line),
        "build_seconds": round(time.monotonic() - started, 1),
    }
    with open(os.path.join(work, "image.json"), "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=2)
    log("lab: Triton image built in %.0f s, %d MiB" % (data["build_seconds"], data["size_bytes"] >> 20))


def guest_image_id(ssh):
    """The ID the guest's engine has under the tag, or None."""
    found = subprocess.run(ssh + ["docker", "image", "inspect", "--format", "{{.Id}}", TAG],
                           check=False, capture_output=True, text=True, timeout=120)
    return found.stdout.strip() if found.returncode == 0 else None


def load(data, ssh, log=print):
    """`docker load` the archive into a guest, streamed over SSH (ssh: the argv that runs a
    command there), unless the guest has this image ID under the tag already. Returns figures."""
    if guest_image_id(ssh) == data["image_id"]:
        log("lab: the guest has %s (%s) already" % (data["tag"], data["image_id"]))
        return {"changed": False, "tag": data["tag"], "image_id": data["image_id"]}
    started = time.monotonic()
    with open(data["archive"], "rb") as archive:
        loaded = subprocess.run(ssh + ["docker", "load"], stdin=archive, check=False, capture_output=True, text=True)
    seconds = time.monotonic() - started
    if loaded.returncode != 0:
        raise RuntimeError("triton-load: docker load failed in the guest (rc=%d): %s"
                           % (loaded.returncode, (loaded.stderr or loaded.stdout).strip()))
    found = guest_image_id(ssh)
    if found != data["image_id"]:
        raise RuntimeError("triton-load: after docker load the guest has %s as %s, expected %s"
                           % (data["tag"], found, data["image_id"]))
    log("lab: loaded %s (%d MiB) into the guest in %.1f s" % (data["tag"], data["size_bytes"] >> 20, seconds))
    return {"changed": True, "tag": data["tag"], "image_id": found, "load_seconds": round(seconds, 1)}


def check(data, timeout=180, log=print):
    """Start the image's tritonserver on the host (own mount and PID namespaces, chroot into
    the unpacked archive, the image's environment) on a one-model python repository, read
    only; wait until it is ready on 127.0.0.1, run one inference, stop it. Returns figures."""
    work = tempfile.mkdtemp(prefix="triton-check-", dir=os.path.dirname(os.path.dirname(data["archive"])))
    proc = None
    try:
        root = os.path.join(work, "rootfs")
        os.makedirs(root)
        started = time.monotonic()
        # The layer, straight out of the docker archive.
        with subprocess.Popen(["tar", "-xOf", data["archive"], data["layer"]], stdout=subprocess.PIPE) as source:
            unpacked = subprocess.run(["tar", "-C", root, "-xf", "-"], stdin=source.stdout, check=False)
        if source.returncode or unpacked.returncode:
            raise RuntimeError("triton-image --check: unpacking %s from %s failed" % (data["layer"], data["archive"]))
        unpack = time.monotonic() - started
        models = os.path.join(work, "models")
        os.makedirs(os.path.join(models, "add_one", "1"))
        with open(os.path.join(models, "add_one", "config.pbtxt"), "w", encoding="utf-8") as handle:
            handle.write(TINY_MODEL_CONFIG)
        with open(os.path.join(models, "add_one", "1", "model.py"), "w", encoding="utf-8") as handle:
            handle.write(TINY_MODEL)
        port = qemu.free_port()
        server = ["tritonserver", "--model-repository=/models", "--http-address=127.0.0.1",
                  "--http-port=%d" % port, "--allow-grpc=false", "--allow-metrics=false",
                  "--exit-on-error=true", "--log-verbose=0"]
        setup = [
            "set -e", "mount --make-rprivate /",
            "mount -t proc proc %s/proc" % shlex.quote(root),
            "mount --rbind /dev %s/dev" % shlex.quote(root),
            "mount -t tmpfs -o size=256m,mode=1777 tmpfs %s/dev/shm" % shlex.quote(root),
            "mount -t tmpfs -o mode=1777 tmpfs %s/tmp" % shlex.quote(root),
            "mount --bind %s %s/models" % (shlex.quote(models), shlex.quote(root)),
            "mount -o remount,bind,ro %s/models" % shlex.quote(root),
            "cd %s" % shlex.quote(root),
            "exec chroot . /usr/bin/env -i %s sh -c %s" % (
                " ".join(shlex.quote("%s=%s" % kv) for kv in ENV.items()),
                shlex.quote("cd %s && exec %s" % (HOME, " ".join(server)))),
        ]
        server_log = os.path.join(work, "server.log")
        with open(server_log, "wb") as out:
            started = time.monotonic()
            proc = subprocess.Popen(["unshare", "--mount", "--pid", "--fork", "--kill-child", "sh", "-c", "\n".join(setup)],
                                    stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        base = "http://127.0.0.1:%d" % port
        ready = None
        while time.monotonic() - started < timeout and proc.poll() is None:
            try:
                with urllib.request.urlopen(base + "/v2/health/ready", timeout=2) as response:
                    if response.status == 200:
                        ready = time.monotonic() - started
                        break
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.5)
        text = open(server_log, encoding="utf-8", errors="replace").read()
        if ready is None:
            raise RuntimeError("triton-image --check: tritonserver not ready on %s within %ds (rc=%s); log:\n%s"
                               % (base, timeout, proc.poll(), text[-4000:]))
        body = json.dumps({"inputs": [{"name": "INPUT0", "datatype": "INT32", "shape": [4], "data": [1, 2, 3, 4]}]})
        request = urllib.request.Request(base + "/v2/models/add_one/infer", data=body.encode(),
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as response:
            output = json.load(response)["outputs"][0]["data"]
        if output != [2, 3, 4, 5]:
            raise RuntimeError("triton-image --check: add_one([1, 2, 3, 4]) returned %r" % (output,))
        version = next((line.split("|")[2].strip() for line in text.splitlines()
                        if line.startswith("|") and line.split("|")[1].strip() == "server_version"), None)
        if version != TRITON_VERSION:
            raise RuntimeError("triton-image --check: the server reports version %r, the tag says %s" % (version, TRITON_VERSION))
        result = {"tag": data["tag"], "content_hash": data["content_hash"], "server_version": version,
                  "unpack_seconds": round(unpack, 1), "ready_seconds": round(ready, 1),
                  "inference": "add_one([1, 2, 3, 4]) = %s" % output, "address": base}
        log("lab: %s ready on %s after %.1f s (unpacked in %.1f s), add_one answered %s"
            % (data["tag"], base, ready, unpack, output))
        return result
    finally:
        if proc is not None and proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        shutil.rmtree(work, ignore_errors=True)
