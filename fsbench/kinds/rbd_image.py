"""An RBD image that fio addresses through librbd (its `rbd` engine): nothing mapped, nothing mounted.

The image is created if missing (an existing one only on a `destructive: true` target, since the
jobs overwrite it) and removed at teardown if fsbench created it. Setup refuses an image another
client has open: fio's engine writing under a mounted file system corrupts it. The fio adapter sets
`ioengine=rbd`, `pool`, `rbdname` and `clientname` from these settings and passes the conf as
CEPH_CONF; fio's engine takes no keyring path, so the key is found the way the conf says.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fsbench.config import schema as s
from fsbench.core.shell import render, sh
from fsbench.kinds.base import KindPlan
from fsbench.kinds.ceph_client import (
    CLIENT_KEYS,
    DEFAULT_CONF,
    DEFAULT_IMAGE,
    IMAGE_KEYS,
    client_args,
    create_image,
    remove_image,
    state_dir,
    unused_image,
)


@dataclass(frozen=True)
class RbdImage:
    """Where fio's rbd engine does its I/O."""

    pool: str = "rbd"
    image: str = DEFAULT_IMAGE
    size: int = 10 * 2**30
    features: str = "layering"
    conf: str = DEFAULT_CONF
    keyring: str = ""
    user: str = "admin"


SECTION = s.Struct({
    **IMAGE_KEYS,
    **CLIENT_KEYS,
}, what="rbd-image settings")


class RbdImageKind:
    """fio's rbd engine on an image of a pool."""

    name = "rbd-image"
    address = "url"
    section = SECTION
    client_process = ""  # librbd runs inside fio

    def settings(self, checked: dict | None) -> object:
        if not checked:
            return None
        values: dict[str, Any] = {k: v for k, v in checked.items() if v is not None}
        if "size" in values:
            values["size"] = int(values["size"])  # sizes are checked as floats
        return RbdImage(**values)

    def texts(self, settings: object) -> list[tuple[str, str]]:
        spec: RbdImage = settings  # type: ignore[assignment]
        if spec is None:
            return []
        return [("pool", spec.pool), ("image", spec.image), ("conf", spec.conf), ("keyring", spec.keyring),
                ("user", spec.user)]

    def check(self, target: object) -> list[tuple[tuple, str, str]]:
        spec: RbdImage | None = getattr(target, "settings", None)
        if spec is None:
            return [(("kind",), "an rbd-image target needs an `rbd-image:` section",
                     "at least `rbd-image: {pool: NAME}`")]
        if spec.keyring:
            return [(("rbd-image", "keyring"), "fio's rbd engine takes no keyring path",
                     "put `keyring = PATH` in the conf, or use the default /etc/ceph/ceph.client.USER.keyring")]
        return []

    def plan(self, target: object, values: dict[str, str], scratch: str) -> KindPlan:
        """The image made if missing and checked unused (first host); removed if made; no mount."""
        spec: RbdImage = target.settings  # type: ignore[attr-defined]
        state = state_dir(scratch, target.name)  # type: ignore[attr-defined]
        image = f"{render(spec.pool, values, quote=False)}/{render(spec.image, values, quote=False)}"
        rbd = ["rbd", *client_args(spec.conf, spec.user, spec.keyring, values)]
        create = create_image(rbd, image, spec.size, spec.features, state, bool(getattr(target, "destructive", False)))
        return KindPlan(prepare=[["mkdir", "-p", state]], once=[sh(create + "\n" + unused_image(rbd, image))],
                        after=[sh(remove_image(rbd, image, state))],
                        via=["echo", f"librbd {image} (fio ioengine=rbd)"])


PLUGIN = RbdImageKind()
