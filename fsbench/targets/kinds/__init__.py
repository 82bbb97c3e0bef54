"""Target kinds: what a system under test is and how fsbench sets it up, checks it and takes it down."""

from fsbench.plugins import Registry
from fsbench.targets.kinds.base import ADDRESSES, KindPlan, StoreAccess, TargetKind

KINDS: Registry[TargetKind] = Registry("target kind", "fsbench.target_kinds", (
    "fsbench.targets.kinds.directory", "fsbench.targets.kinds.device", "fsbench.targets.kinds.juicefs",
    "fsbench.targets.kinds.s3fs", "fsbench.targets.kinds.rclone", "fsbench.targets.kinds.fuse",
    "fsbench.targets.kinds.cephfs", "fsbench.targets.kinds.rbd", "fsbench.targets.kinds.rbd_image",
    "fsbench.targets.kinds.hdfs", "fsbench.targets.kinds.s3a", "fsbench.targets.kinds.jfs"), TargetKind)

__all__ = ["ADDRESSES", "KINDS", "KindPlan", "StoreAccess", "TargetKind"]
