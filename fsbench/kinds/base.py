"""The target kind contract, kept importable here for plug-ins written before it moved to fsbench.api.kinds."""

from fsbench.api.kinds import ADDRESSES, KindPlan, KindTarget, StoreAccess, TargetKind

__all__ = ["ADDRESSES", "KindPlan", "KindTarget", "StoreAccess", "TargetKind"]
