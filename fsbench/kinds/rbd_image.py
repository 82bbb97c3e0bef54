"""An RBD image that fio addresses through librbd (its `rbd` engine): nothing mapped, nothing mounted.

The image is created if missing (an existing one only on a `destructive: true` target, since the
jobs overwrite it) and removed at teardown if fsbench created it. Setup refuses an image another
client has open: fio's engine writing under a mounted file system corrupts it. The fio adapter sets
`ioengine=rbd`, `pool`, `rbdname` and `clientname` from these settings and passes the conf as
CEPH_CONF; fio's engine takes no keyring path, so the key is found the way the conf says.
"""

from __future__ import annotations

from dataclasses import dataclass

from fsbench.api.kinds import KindIssue, KindPlan, KindTarget, TargetKind, settings_of
from fsbench.api.sections import Section
from fsbench.core.shell import render, sh
from fsbench.kinds.ceph_client import (
    client_args,
    conf_option,
    create_image,
    features_option,
    image_option,
    keyring_option,
    pool_option,
    remove_image,
    size_option,
    state_dir,
    unused_image,
    user_option,
)


@dataclass(frozen=True)
class RbdImage:
    """Where fio's rbd engine does its I/O."""

    pool: str = pool_option()
    image: str = image_option()
    size: int = size_option()
    features: str = features_option()
    conf: str = conf_option()
    keyring: str = keyring_option()
    user: str = user_option()


SECTION = Section(RbdImage, "rbd-image settings")


class RbdImageKind:
    """fio's rbd engine on an image of a pool."""

    name = "rbd-image"
    address = "url"
    section = SECTION
    client_process = ""  # librbd runs inside fio

    def settings(self, checked: dict | None) -> RbdImage | None:
        return SECTION.build(checked)

    def texts(self, settings: RbdImage | None) -> list[tuple[str, str]]:
        spec = settings
        if spec is None:
            return []
        return [("pool", spec.pool), ("image", spec.image), ("conf", spec.conf), ("keyring", spec.keyring),
                ("user", spec.user)]

    def check(self, target: KindTarget[RbdImage]) -> list[KindIssue]:
        spec = target.settings
        if spec is None:
            return [(("kind",), "an rbd-image target needs an `rbd-image:` section",
                     "at least `rbd-image: {pool: NAME}`")]
        if spec.keyring:
            return [(("rbd-image", "keyring"), "fio's rbd engine takes no keyring path",
                     "put `keyring = PATH` in the conf, or use the default /etc/ceph/ceph.client.USER.keyring")]
        return []

    def plan(self, target: KindTarget[RbdImage], values: dict[str, str], scratch: str) -> KindPlan:
        """The image made if missing and checked unused (first host); removed if made; no mount."""
        spec = settings_of(target, self.name)
        state = state_dir(scratch, target.name)
        image = f"{render(spec.pool, values, quote=False)}/{render(spec.image, values, quote=False)}"
        rbd = ["rbd", *client_args(spec.conf, spec.user, spec.keyring, values)]
        create = create_image(rbd, image, spec.size, spec.features, state, target.destructive)
        return KindPlan(prepare=[["mkdir", "-p", state]], once=[sh(create + "\n" + unused_image(rbd, image))],
                        after=[sh(remove_image(rbd, image, state))],
                        via=["echo", f"librbd {image} (fio ioengine=rbd)"])


PLUGIN: TargetKind[RbdImage] = RbdImageKind()
