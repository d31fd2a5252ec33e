#!/usr/bin/env python3
"""Prints every message of an MCAP file as one JSON line, read with the official `mcap`
Python package: channel topic, message encoding and metadata, sequence, log and publish
times, and the data's length and SHA-256. weft's recording tests compare these lines with
what they published.

Usage: mcap_dump.py FILE
"""

import hashlib
import json
import sys

from mcap.reader import make_reader


def main() -> int:
    with open(sys.argv[1], "rb") as f:
        reader = make_reader(f)
        for _schema, channel, message in reader.iter_messages(log_time_order=False):
            print(json.dumps({
                "topic": channel.topic,
                "encoding": channel.message_encoding,
                "metadata": dict(channel.metadata),
                "sequence": message.sequence,
                "log_time": message.log_time,
                "publish_time": message.publish_time,
                "len": len(message.data),
                "sha256": hashlib.sha256(message.data).hexdigest(),
            }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
