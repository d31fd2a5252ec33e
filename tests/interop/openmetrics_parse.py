#!/usr/bin/env python3
"""Parses OpenMetrics text from standard input with the Prometheus project's own parser
(`prometheus_client.openmetrics.parser`) and prints one JSON line per sample: name,
labels, value. It fails (non-zero exit, the parser's error) on text Prometheus would
refuse."""

import json
import sys

from prometheus_client.openmetrics.parser import text_string_to_metric_families


def main() -> int:
    for family in text_string_to_metric_families(sys.stdin.read()):
        for sample in family.samples:
            print(json.dumps({
                "family": family.name,
                "type": family.type,
                "name": sample.name,
                "labels": sample.labels,
                "value": sample.value,
            }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
