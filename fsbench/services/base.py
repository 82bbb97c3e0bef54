"""The service kind contract, kept importable here for plug-ins written before it moved to fsbench.api.services."""

from fsbench.api.services import BASE_EXPORTS, ServiceKind, ServicePlan, ServiceSpec

__all__ = ["BASE_EXPORTS", "ServiceKind", "ServicePlan", "ServiceSpec"]
