#!/usr/bin/env python3
"""dest_corpus.py - write the seed corpus of fuzz_dest (tests/fuzz/corpus/dest).

    python3 tests/fuzz/dest_corpus.py [DIR]

An input is: setup flags (1 byte), which registration fails (1 byte), then
received messages (16-byte big-endian header + payload); see fuzz_dest.c.
The seeds are whole migrations and one of each way to get refused.
"""
import os
import struct
import sys

MIB = 1 << 20

# fuzz_dest.c's setup flags
PIN_ALL, BLOCKS_FIRST, WITHHOLD, OFFSETS, FAIL_REG, NULL_EMPTY = 0x01, 0x02, 0x04, 0x20, 0x40, 0x80


def layout(n):
    return n << 3


# message types
ERROR, READY, QEMU_FILE, BLOCKS_REQ, BLOCKS_RES, COMPRESS, REG_REQ, REG_RES, REG_FIN, UNREG_REQ = range(1, 11)


def msg(type_, payload=b"", repeat=1):
    return struct.pack(">IIII", len(payload), type_, repeat, 0) + payload


def register(key, block, chunks=0):
    return struct.pack(">QIIQ", key, block, 0, chunks)


def compress(block, offset, length, value=0):
    return struct.pack(">IIQQ", value, block, offset, length)


def regs(*recs):
    return msg(REG_REQ, b"".join(register(*r) for r in recs), len(recs))


def unregs(*recs):
    return msg(UNREG_REQ, b"".join(register(*r) for r in recs), len(recs))


def compresses(*recs):
    return msg(COMPRESS, b"".join(compress(*r) for r in recs), len(recs))


def seed(flags, *msgs, fail=0):
    return bytes([flags, fail]) + b"".join(msgs)


# Layout 0 as the library lays it out: pc.ram (3 MiB + 8292) at 0, vga.vram
# (16 KiB) at 4 MiB, empty and rom (1 byte) at 5 MiB.  With OFFSETS: pc.ram at
# 0x100000000, vga.vram at 0x200000123, empty at 0x300000000, rom at
# 0xffffffffff000000.
PC, VGA, EMPTY, ROM = 0, 1, 2, 3
VGA_AT = 4 * MIB
ROM_AT = 5 * MIB
PC_LEN = 3 * MIB + 8292

SEEDS = {
    "01-migration": seed(
        BLOCKS_FIRST,
        msg(QEMU_FILE, b"QEVM\0\0\0\3"),
        msg(BLOCKS_REQ),
        regs((0, PC)),
        regs((MIB + 4096, PC, 2)),
        compresses((VGA, VGA_AT, 16384)),
        compresses((PC, 2 * MIB + 100, 5000)),
        unregs((0, PC)),
        msg(REG_FIN),
        regs((0, PC)),
        msg(REG_FIN),
        msg(QEMU_FILE, b"\x00" * 40),
    ),
    "02-blocks-needed": seed(
        0,
        msg(BLOCKS_REQ),
        regs((3 * MIB, PC)),
        compresses((ROM, ROM_AT, 1)),
        msg(REG_FIN),
    ),
    "03-pin-all": seed(
        PIN_ALL | BLOCKS_FIRST,
        msg(BLOCKS_REQ),
        regs((MIB, PC, 1)),
        compresses((PC, 0, PC_LEN)),
        msg(REG_FIN),
    ),
    "04-repeat": seed(
        BLOCKS_FIRST,
        msg(BLOCKS_REQ),
        regs((0, PC), (3 * MIB + 8000, PC), (VGA_AT + 100, VGA), (ROM_AT, ROM)),
        compresses((PC, MIB, 4096), (PC, MIB + 4096, 4096), (VGA, VGA_AT + 1, 10)),
        unregs((0, PC), (3, PC), (0, VGA)),
        msg(REG_FIN),
    ),
    "05-offsets": seed(
        OFFSETS | BLOCKS_FIRST | NULL_EMPTY,
        msg(BLOCKS_REQ),
        regs((0x200000123 + 5, VGA)),
        compresses((ROM, 0xFFFFFFFFFF000000, 1), (EMPTY, 0x300000000, 0)),
        compresses((PC, 0x100000000 + PC_LEN - 1, 1)),
        msg(REG_FIN),
    ),
    "06-withhold": seed(WITHHOLD, msg(BLOCKS_REQ)),
    "07-blocks-twice": seed(BLOCKS_FIRST | WITHHOLD, msg(BLOCKS_REQ), msg(REG_FIN)),
    "08-compress-past-end": seed(
        BLOCKS_FIRST, msg(BLOCKS_REQ), compresses((PC, 0, 4096), (VGA, VGA_AT + 1, 16384))
    ),
    "09-compress-value": seed(BLOCKS_FIRST, msg(BLOCKS_REQ), compresses((PC, 0, 1, 1))),
    "10-register-before-blocks": seed(BLOCKS_FIRST, regs((0, PC))),
    "11-register-too-many-chunks": seed(BLOCKS_FIRST, msg(BLOCKS_REQ), regs((2 * MIB, PC, 2))),
    "12-unregister-bad-chunk": seed(BLOCKS_FIRST, msg(BLOCKS_REQ), unregs((4, PC))),
    "13-second-blocks-request": seed(BLOCKS_FIRST, msg(BLOCKS_REQ), msg(BLOCKS_REQ)),
    "14-ready-to-destination": seed(BLOCKS_FIRST, msg(READY)),
    "15-peer-error": seed(BLOCKS_FIRST, msg(BLOCKS_REQ), msg(ERROR)),
    "16-short-receive": seed(BLOCKS_FIRST, msg(BLOCKS_REQ), msg(REG_REQ, register(0, PC))[:30]),
    "17-registration-fails": seed(
        FAIL_REG | BLOCKS_FIRST, msg(BLOCKS_REQ), regs((0, PC)), regs((MIB, PC)), fail=1
    ),
    "18-pin-all-fails": seed(PIN_ALL | FAIL_REG, msg(BLOCKS_REQ), fail=0),
    "19-layout1": seed(
        layout(1) | OFFSETS | BLOCKS_FIRST,
        msg(BLOCKS_REQ),
        regs((0x40000000, 0), (0x40000000 + 2 * MIB, 1)),
        compresses((0, 0x40000000, MIB), (1, 0x40000000 + 2 * MIB, 1)),
        unregs((0, 0), (2, 1)),
        msg(REG_FIN),
    ),
    "20-layout2": seed(
        layout(2) | OFFSETS,
        msg(BLOCKS_REQ),
        regs((4096 + 12287, 0)),
        compresses((0, 4096, 12288)),
        msg(REG_FIN),
    ),
    "21-no-blocks": seed(layout(3), msg(BLOCKS_REQ), msg(REG_FIN), regs((0, 0))),
    "22-stream-only": seed(0, msg(QEMU_FILE, b"x" * 100), msg(QEMU_FILE), msg(QEMU_FILE, b"y")),
    # the whole block asked for again and again is registered once
    "23-register-whole-block-again": seed(
        BLOCKS_FIRST,
        msg(BLOCKS_REQ),
        regs(*[(0, PC, 3)] * 64),
        regs((MIB, PC), (0, PC, 3)),
        unregs((1, PC)),
        msg(REG_FIN),
    ),
    # a range over chunks already registered in another range is refused
    "24-register-overlap": seed(BLOCKS_FIRST, msg(BLOCKS_REQ), regs((0, PC)), regs((0, PC, 1))),
    # one COMPRESS zeroes each byte once: overlapping ranges are refused
    "25-compress-overlap": seed(
        BLOCKS_FIRST,
        msg(BLOCKS_REQ),
        compresses((PC, 0, 4096), (PC, 4096, 4096), (PC, 0, 0), (VGA, VGA_AT, 16384)),
        compresses((PC, MIB, 8192), (PC, MIB + 4096, 1)),
    ),
}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus", "dest")
    os.makedirs(out, exist_ok=True)
    for name, data in SEEDS.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
