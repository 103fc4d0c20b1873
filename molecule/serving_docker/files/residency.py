"""Print, as JSON, how many of each file's pages are in the page cache.

Run on the guest by verify.yml, independently of the collection's page_cache module: the
guest image has no fincore (util-linux-extra), so mincore(2) is called through ctypes on a
read-only mapping of each file given as an argument.
"""
import ctypes
import json
import mmap
import os
import sys

PAGE = os.sysconf('SC_PAGE_SIZE')
LIBC = ctypes.CDLL('libc.so.6', use_errno=True)
LIBC.mmap.restype = ctypes.c_void_p
LIBC.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
LIBC.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
LIBC.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
MAP_FAILED = ctypes.c_void_p(-1).value


def residency(path):
    size = os.path.getsize(path)
    pages = (size + PAGE - 1) // PAGE
    if not size:
        return {'path': path, 'size': 0, 'pages': 0, 'resident': 0}
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
        finally:
            LIBC.munmap(addr, size)
    finally:
        os.close(fd)
    return {'path': path, 'size': size, 'pages': pages, 'resident': resident}


print(json.dumps([residency(path) for path in sys.argv[1:]]))
