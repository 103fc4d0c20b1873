"""Print, as JSON, how many of each file's pages are in the page cache, and which cgroup each is charged to.

Run on the guest by verify.yml, independently of the collection's page_cache module: the
guest image has no fincore (util-linux-extra), so mincore(2) is called through ctypes on a
read-only mapping of each file under the directory given as the argument (sorted by path). With a second
argument the JSON is also written to that file (side_effect keeps the residency after the reboot for verify):
one script run, where a find, the script and a copy were three. cgroup v2 charges a page of the page cache
to the cgroup of the process that first read it: for every resident page the script maps it
(no read from disk: it is in the cache), takes its frame from /proc/self/pagemap and the inode
of its memory cgroup from /proc/kpagecgroup (both root only), and names the cgroup directory
with that inode ("owners": {cgroup: pages}).
"""
import ctypes
import json
import mmap
import os
import struct
import sys

PAGE = os.sysconf('SC_PAGE_SIZE')
LIBC = ctypes.CDLL('libc.so.6', use_errno=True)
LIBC.mmap.restype = ctypes.c_void_p
LIBC.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
LIBC.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
LIBC.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
MAP_FAILED = ctypes.c_void_p(-1).value
PFN_MASK = (1 << 55) - 1
CGROUPS = '/sys/fs/cgroup'


def cgroup_names():
    return dict((os.stat(directory).st_ino, os.path.relpath(directory, CGROUPS))
                for directory, dummy, dummy2 in os.walk(CGROUPS))


def owners(addr, vec, names, pagemap, kpagecgroup):
    out = {}
    for index, byte in enumerate(vec.raw):
        if not byte & 1:
            continue
        page = addr + index * PAGE
        ctypes.string_at(page, 1)  # maps the cached page into this process: pagemap then has its frame
        # pread, not a buffered file: an entry read ahead before its page was mapped would say "absent".
        entry = struct.unpack('<Q', os.pread(pagemap, 8, page // PAGE * 8))[0]
        if not entry >> 63:
            continue
        inode = struct.unpack('<Q', os.pread(kpagecgroup, 8, (entry & PFN_MASK) * 8))[0]
        name = names.get(inode, 'inode %d' % inode)
        out[name] = out.get(name, 0) + 1
    return out


def residency(path, names, pagemap, kpagecgroup):
    size = os.path.getsize(path)
    pages = (size + PAGE - 1) // PAGE
    if not size:
        return {'path': path, 'size': 0, 'pages': 0, 'resident': 0, 'owners': {}}
    fd = os.open(path, os.O_RDONLY)
    try:
        addr = LIBC.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
        if addr == MAP_FAILED:
            raise OSError(ctypes.get_errno(), 'mmap %s' % path)
        try:
            vec = ctypes.create_string_buffer(pages)
            if LIBC.mincore(addr, size, vec) != 0:
                raise OSError(ctypes.get_errno(), 'mincore %s' % path)
            resident = sum(byte & 1 for byte in vec.raw)
            charged = owners(addr, vec, names, pagemap, kpagecgroup)
        finally:
            LIBC.munmap(addr, size)
    finally:
        os.close(fd)
    return {'path': path, 'size': size, 'pages': pages, 'resident': resident, 'owners': charged}


def main(directory, out=None):
    paths = sorted(os.path.join(root, name) for root, dummy, files in os.walk(directory) for name in files)
    names = cgroup_names()
    pagemap, kpagecgroup = os.open('/proc/self/pagemap', os.O_RDONLY), os.open('/proc/kpagecgroup', os.O_RDONLY)
    try:
        text = json.dumps([residency(path, names, pagemap, kpagecgroup) for path in paths])
    finally:
        os.close(pagemap)
        os.close(kpagecgroup)
    if out:
        with open(out, 'w') as handle:
            handle.write(text)
    print(text)


if __name__ == '__main__':
    main(*sys.argv[1:3])
