#!/usr/bin/python3
"""check_record.py - compare rdmig's record.txt with what the source had.

usage: check_record.py RECORD BLOCK_NAME RAM_FILE MODE [REG_CHUNK_MIB]
  MODE: dynamic | pin_all | live
  REG_CHUNK_MIB: the source's registration chunk in MiB (QEMU 11.1's
    x-rdma-chunk-size; default 1)

Prints "ok - ..." / "FAIL - ..." lines and exits 1 if any check failed:
  - the record is complete (format line, end ok) and its phases agree with
    the stream: one RAM_BLOCKS_REQUEST phase, then one registration phase
    per RAM_SAVE_FLAG_HOOK, each at the offset just past its HOOK word;
  - the block's non-zero chunks after the migration are the RAM file's;
  - dynamic (stopped source): the chunks the first pass registered are
    exactly the non-zero ones, the compressed ones exactly the zero ones
    (with a registration chunk of N MiB: the record's 1 MiB chunks of every
    N MiB chunk that holds a non-zero one are registered, those of the
    all-zero ones only compressed);
    pin_all: every chunk became resident in the setup phase.
"""
import sys

CHUNK = 1 << 20


def ranges(text):
    out = set()
    if text == "-":
        return out
    for part in text.split(","):
        a, _, b = part.partition("-")
        out.update(range(int(a), int(b or a) + 1))
    return out


def kv(fields):
    return dict(f.split("=", 1) for f in fields if "=" in f)


def main(argv):
    record, name, ram_file, mode = argv[1:5]
    reg = int(argv[5]) if len(argv) > 5 else 1
    lines = open(record).read().splitlines()
    failed = []

    def check(what, cond):
        print(("ok - " if cond else "FAIL - ") + what)
        if not cond:
            failed.append(what)

    check("record: format line", lines[:1] == ["rdmig-qemu-record 1"])
    ends = [l for l in lines if l.startswith("end ")]
    check("record: ends ok (%s)" % (ends[-1] if ends else "no end line"),
          bool(ends) and ends[-1].startswith("end ok how=eof+vmdesc"))
    index = None
    for l in lines:
        f = l.split(" ")
        if f[0] == "block" and l.split("name=", 1)[1] == name:
            index = int(f[1])
    check("record: block '%s' is listed" % name, index is not None)
    if index is None:
        return 1
    phases = [l.split(" ") for l in lines if l.startswith("phase ")]
    stream = kv(next(l for l in lines if l.startswith("stream ")).split(" "))
    hooks = int(stream["hooks"])
    kinds = [p[2] for p in phases]
    check("record: RAM_BLOCKS_REQUEST, then %d registration phases (one per HOOK): %s"
          % (hooks, " ".join(kinds)),
          kinds == ["ram_blocks_request"] + ["registration"] * hooks)
    hook_ok = all(kv(p)["offset"] == kv(p)["hook"] for p in phases)
    check("record: every phase begins just past a HOOK word", hook_ok)

    data = open(ram_file, "rb").read()
    nonzero = {c for c in range((len(data) + CHUNK - 1) // CHUNK)
               if data[c * CHUNK:(c + 1) * CHUNK].count(0) != len(data[c * CHUNK:(c + 1) * CHUNK])}
    got = next((l for l in lines if l.startswith("nonzero %d " % index)), "nonzero 0 chunks=-")
    check("record: non-zero chunks of '%s' match the RAM file (%d of %d)"
          % (name, len(nonzero), (len(data) + CHUNK - 1) // CHUNK),
          ranges(got.split("chunks=", 1)[1]) == nonzero)

    touched = {}
    for l in lines:
        f = l.split(" ")
        if f[0] == "touched" and f[2] == "block=%d" % index:
            touched[int(f[1])] = (ranges(kv(f)["data"]), ranges(kv(f)["zero"]))
    all_chunks = set(range((len(data) + CHUNK - 1) // CHUNK))
    registered = set().union(*(t[0] for t in touched.values()))
    compressed = set().union(*(t[1] for t in touched.values()))
    if mode == "dynamic":
        # a registration covers every record chunk its QEMU chunk overlaps
        want = {c for c in all_chunks if c // reg in {n // reg for n in nonzero}}
        check("record: nothing registered or compressed in the setup phase", 1 not in touched)
        check("record: the chunks registered are exactly those of the %d MiB chunks with "
              "non-zero data (%d)" % (reg, len(registered)), registered == want)
        check("record: the chunks only compressed are exactly the zero ones (%d)"
              % len(compressed - registered), compressed - registered == all_chunks - want)
    elif mode == "pin_all":
        check("record: with pin-all no chunk is listed", not touched)
    else:
        late = {c for p, t in touched.items() if p > 2 for c in t[0]}
        print("# record: %d registration phases; %d chunks of '%s' first registered after "
              "phase 2; %d compressed first and registered in a later phase"
              % (hooks, len(late), name, len(registered & compressed)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
