"""Service kinds: servers a scenario starts and stops around its targets (metadata engines, S3, Ceph...)."""

from typing import Any

from fsbench.api.registry import Registry
from fsbench.api.services import ServiceKind, ServicePlan

#: each kind is checked as it registers (its members, its methods' parameters): fsbench.api.services
SERVICE_KINDS: Registry[ServiceKind[Any]] = Registry("service kind", "fsbench.service_kinds", (
    "fsbench.services.command", "fsbench.services.s3_server", "fsbench.services.ceph_lab",
    "fsbench.services.hdfs", "fsbench.services.redis", "fsbench.services.mysql", "fsbench.services.postgres",
    "fsbench.services.etcd"), ServiceKind, (), {"s3": "fsbench.services.s3_server"})

__all__ = ["SERVICE_KINDS", "ServiceKind", "ServicePlan"]
