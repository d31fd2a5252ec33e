"""Seed corpora for the fuzz targets, cut from the captured vectors.

    python make_seeds.py SPEC_DIR OUT_DIR

OUT_DIR/batch: one file per batch (stream prefix removed);
OUT_DIR/network: the network messages of each Frame (Frame header removed).
"""
import os
import sys


def zint_len(b, i):
    n = 0
    while i + n < len(b) and n < 9:
        n += 1
        if b[i + n - 1] & 0x80 == 0:
            break
    return n


def main():
    spec, out = sys.argv[1], sys.argv[2]
    vec = os.path.join(spec, "vectors")
    os.makedirs(os.path.join(out, "batch"), exist_ok=True)
    os.makedirs(os.path.join(out, "network"), exist_ok=True)
    count = 0
    for name in sorted(os.listdir(vec)):
        if not name.endswith(".hex") or name.startswith(("07", "10", "11")):
            continue
        streams = {}
        for line in open(os.path.join(vec, name)):
            if line.startswith("#"):
                conn = line.split()[2]
                continue
            if line[:1] in "<>":
                streams.setdefault((conn, line[0]), []).append(bytes.fromhex(line[2:].strip()))
        udp = name.startswith("09")
        for key, chunks in streams.items():
            batches = chunks if udp else []
            if not udp:
                data = b"".join(chunks)
                i = 0
                while i + 2 <= len(data):
                    n = data[i] | data[i + 1] << 8
                    batches.append(data[i + 2:i + 2 + n])
                    i += 2 + n
            for b in batches:
                if len(b) > 4096:
                    b = b[:4096]
                count += 1
                open(os.path.join(out, "batch", f"{name[:2]}_{count:04d}"), "wb").write(b)
                if b and b[0] & 0x1F == 0x05:
                    j = 1 + zint_len(b, 1)
                    if b[0] & 0x80:
                        j += 1 + zint_len(b, j + 1)
                    if j < len(b):
                        open(os.path.join(out, "network", f"{name[:2]}_{count:04d}"), "wb").write(b[j:])
    print(f"{count} seed batches")


if __name__ == "__main__":
    main()
