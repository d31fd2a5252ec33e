"""A scouting test double: answers every Scout received on a multicast group
with a Hello (router role) announcing one locator, built byte by byte from
the spec (section 5.2). Used only inside the test's network namespace.

    python hello_responder.py GROUP PORT IFACE_ADDR LOCATOR SECONDS
"""
import os
import socket
import struct
import sys
import time


def main():
    group, port, iface, locator, seconds = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], float(sys.argv[5])
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("", port))
    s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP,
                 struct.pack("4s4s", socket.inet_aton(group), socket.inet_aton(iface)))
    s.settimeout(0.2)
    zid = os.urandom(15) + b"\x01"                      # 16 bytes, non-zero top byte
    loc = locator.encode()
    hello = bytes([0x22, 0x09, 0xF0]) + zid + bytes([1, len(loc)]) + loc  # L=1, router, 1 locator
    print("RESPONDER UP", flush=True)
    end = time.time() + seconds
    while time.time() < end:
        try:
            data, src = s.recvfrom(512)
        except socket.timeout:
            continue
        if len(data) >= 3 and data[0] & 0x1F == 0x01 and data[1] == 0x09:
            print(f"SCOUT what={data[2] & 7} zid={'yes' if data[2] & 8 else 'no'} from {src[0]}", flush=True)
            s.sendto(hello, src)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:  # the runner stops it with SIGINT
        sys.exit(0)
