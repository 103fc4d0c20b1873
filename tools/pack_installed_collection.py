"""Pack an installed collection (as the `ansible` PyPI bundle installs it) into a collection tarball
that `ansible-galaxy collection install` accepts: MANIFEST.json, FILES.json and the files at the top.

The bundle leaves out what a collection ships for its own CI (tests/, .azure-pipelines/, ...) but
keeps the FILES.json that lists them, and the installer refuses a tarball missing a listed file: the
packed FILES.json lists what is there (each entry's checksum as it was), and MANIFEST.json carries
that FILES.json's checksum. Used by tools/ee-image.sh (the execution environment built offline).

    python3 tools/pack_installed_collection.py <installed collection directory> <tarball>
"""
import hashlib
import io
import json
import os
import sys
import tarfile


def _add(tar, name, data):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = 0o644
    tar.addfile(info, io.BytesIO(data))


def pack(source, dest):
    with open(os.path.join(source, 'FILES.json'), 'rb') as handle:
        files = json.load(handle)
    files['files'] = [entry for entry in files['files']
                      if entry['name'] == '.' or os.path.lexists(os.path.join(source, entry['name']))]
    files_json = json.dumps(files, indent=4).encode()
    with open(os.path.join(source, 'MANIFEST.json'), 'rb') as handle:
        manifest = json.load(handle)
    manifest['file_manifest_file']['chksum_sha256'] = hashlib.sha256(files_json).hexdigest()
    with tarfile.open(dest, 'w:gz') as tar:
        _add(tar, 'MANIFEST.json', json.dumps(manifest, indent=4).encode())
        _add(tar, 'FILES.json', files_json)
        for entry in files['files']:
            if entry['name'] != '.':
                tar.add(os.path.join(source, entry['name']), arcname=entry['name'], recursive=False)
    return len(files['files']) - 1


if __name__ == '__main__':
    if len(sys.argv) != 3:
        sys.exit(__doc__.strip().splitlines()[-1].strip())
    print('%s: %d files' % (sys.argv[2], pack(sys.argv[1], sys.argv[2])))
