"""Target kinds: what a system under test is and how fsbench sets it up, checks it and takes it down."""

from fsbench.api.kinds import ADDRESSES, KIND_HOOKS, KindPlan, KindRegistry, StoreAccess, TargetKind

#: each kind is checked as it registers (its hooks' signatures, its settings type): fsbench.api.kinds
KINDS = KindRegistry("target kind", "fsbench.target_kinds", (
    "fsbench.kinds.directory", "fsbench.kinds.device", "fsbench.kinds.juicefs",
    "fsbench.kinds.s3fs", "fsbench.kinds.rclone", "fsbench.kinds.fuse",
    "fsbench.kinds.cephfs", "fsbench.kinds.rbd", "fsbench.kinds.rbd_image",
    "fsbench.kinds.hdfs", "fsbench.kinds.s3a", "fsbench.kinds.jfs"), TargetKind, KIND_HOOKS)

__all__ = ["ADDRESSES", "KINDS", "KindPlan", "StoreAccess", "TargetKind"]
