"""What the examples share: choosing the implementation and building the configuration.

Every example runs with weft (``import weft as zenoh``, the default) or with Eclipse
Zenoh's zenoh-python (``--zenoh``, or ``WEFT_EXAMPLES_IMPL=zenoh``): the same program.
"""

import argparse
import json
import os
import sys


def parse(description, **extra):
    """Parses the common options (-m mode, -e connect, -l listen, --no-multicast-scouting,
    --zenoh) and `extra` ones (name -> (default, help)); returns (zenoh module, args)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("-m", "--mode", choices=["peer", "client"], default=None)
    parser.add_argument("-e", "--connect", action="append", default=[])
    parser.add_argument("-l", "--listen", action="append", default=[])
    parser.add_argument("--no-multicast-scouting", action="store_true")
    parser.add_argument("--zenoh", action="store_true", help="run with zenoh-python")
    for name, (default, help_text) in extra.items():
        kind = type(default) if default is not None else str
        parser.add_argument(f"--{name}", type=kind, default=default, help=help_text)
    args = parser.parse_args()
    if args.zenoh or os.environ.get("WEFT_EXAMPLES_IMPL") == "zenoh":
        import zenoh
    else:
        import weft as zenoh
    return zenoh, args


def config(zenoh, args):
    """The session configuration the options ask for."""
    c = zenoh.Config()
    if args.mode:
        c.insert_json5("mode", json.dumps(args.mode))
    if args.connect:
        c.insert_json5("connect/endpoints", json.dumps(args.connect))
    if args.listen:
        c.insert_json5("listen/endpoints", json.dumps(args.listen))
    if args.no_multicast_scouting:
        c.insert_json5("scouting/multicast/enabled", "false")
    return c


def say(*parts):
    """Prints a line at once (the tests read it)."""
    print(*parts, flush=True)
    sys.stdout.flush()
