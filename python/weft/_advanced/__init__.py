"""zenoh.ext's advanced publisher and subscriber, on top of weft's API (see
docs/protocol-notes.md for what they exchange)."""

from .config import (
    CacheConfig,
    HistoryConfig,
    Miss,
    MissDetectionConfig,
    RecoveryConfig,
    RepliesConfig,
)
from .publisher import AdvancedPublisher, declare_advanced_publisher
from .subscriber import AdvancedSubscriber, SampleMissListener, declare_advanced_subscriber

__all__ = [
    "AdvancedPublisher",
    "AdvancedSubscriber",
    "CacheConfig",
    "HistoryConfig",
    "Miss",
    "MissDetectionConfig",
    "RecoveryConfig",
    "RepliesConfig",
    "SampleMissListener",
    "declare_advanced_publisher",
    "declare_advanced_subscriber",
]
