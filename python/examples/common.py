"""What the examples share: choosing the implementation and building the configuration.

Every example runs with weft (``import weft as zenoh``, the default) or with Eclipse
Zenoh's zenoh-python (``--zenoh``, or ``WEFT_EXAMPLES_IMPL=zenoh``): the same program.
A type checker reads them against weft's stubs.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
from types import ModuleType
from typing import TYPE_CHECKING

__all__ = ["config", "parse", "say", "zenoh"]


def implementation() -> ModuleType:
    """zenoh-python's module with --zenoh (or WEFT_EXAMPLES_IMPL=zenoh), else weft's."""
    wants_zenoh = "--zenoh" in sys.argv[1:] or os.environ.get("WEFT_EXAMPLES_IMPL") == "zenoh"
    return importlib.import_module("zenoh" if wants_zenoh else "weft")


if TYPE_CHECKING:
    import weft as zenoh
else:
    zenoh = implementation()


def parse(description: str, **extra: tuple[object, str]) -> argparse.Namespace:
    """Parses the common options (-m mode, -e connect, -l listen, --no-multicast-scouting,
    --zenoh) and `extra` ones (name -> (default, help)); a flag's type is its default's."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("-m", "--mode", choices=["peer", "client"], default=None)
    parser.add_argument("-e", "--connect", action="append", default=[])
    parser.add_argument("-l", "--listen", action="append", default=[])
    parser.add_argument("--no-multicast-scouting", action="store_true")
    parser.add_argument("--zenoh", action="store_true", help="run with zenoh-python")
    for name, (default, help_text) in extra.items():
        if isinstance(default, bool):
            parser.add_argument(f"--{name}", action="store_true", help=help_text)
            continue
        kind = type(default) if default is not None else str
        parser.add_argument(f"--{name}", type=kind, default=default, help=help_text)
    return parser.parse_args()


def config(args: argparse.Namespace) -> zenoh.Config:
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


def say(*parts: object) -> None:
    """Prints a line at once (the tests read it)."""
    print(*parts, flush=True)
