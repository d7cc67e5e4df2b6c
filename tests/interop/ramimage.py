#!/usr/bin/python3
"""ramimage.py - guest RAM contents for the interop tests, reproducible.

usage: ramimage.py MIB OUT [ZERO_FROM_MIB ZERO_TO_MIB]

Each 1 MiB chunk (the unit of RDMA registration) gets one of eight kinds,
by chunk number modulo 8, so that a migration sees every case: random
data, an all-zero chunk (QEMU sends COMPRESS), repeated patterns, pages
mixing random/zero/pattern, a zero chunk with a single byte set at its end,
and 0xff.  Chunks in [ZERO_FROM, ZERO_TO) are all zero (room for a guest
to write into).
"""
import random
import sys

PAGE = 4096
CHUNK = 1 << 20


def pattern_page(n):
    unit = bytes((n * 7 + i * 13) & 0xff for i in range(16))
    return unit * (PAGE // 16)


def chunk(c, rng):
    kind = c % 8
    pages = CHUNK // PAGE
    if kind == 0:
        return rng.randbytes(CHUNK)
    if kind in (1, 5):
        return bytes(CHUNK)
    if kind == 2:
        return b"".join(pattern_page(c * pages + p) for p in range(pages))
    if kind == 3:
        out = []
        for p in range(pages):
            out.append((rng.randbytes(PAGE), bytes(PAGE), pattern_page(p))[p % 3])
        return b"".join(out)
    if kind == 4:
        return bytes(CHUNK - 1) + b"\x5a"
    if kind == 6:
        return b"".join(bytes(PAGE) if p % 5 == 0 else rng.randbytes(PAGE) for p in range(pages))
    return b"\xff" * CHUNK


def main(argv):
    mib = int(argv[1])
    zero_from, zero_to = (int(argv[3]), int(argv[4])) if len(argv) > 4 else (0, 0)
    rng = random.Random(20250526)
    with open(argv[2], "wb") as f:
        for c in range(mib):
            f.write(bytes(CHUNK) if zero_from <= c < zero_to else chunk(c, rng))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
