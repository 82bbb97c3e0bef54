"""A team's templates folder, read as untrusted input: only the folder's own plain files, never through a link.

Jinja's FileSystemLoader follows symbolic links, so a link in a received folder (`leak.txt -> /etc/shadow`,
`sub -> /root`) put a root-only file into the report. Here each part of a template's name is opened inside
the folder opened before it, refusing links (O_NOFOLLOW), and the file itself is checked on its descriptor
to be a regular file and read to a bound (fsbench.config.files): a link swapped in between changes nothing.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from pathlib import Path

import jinja2
from jinja2.loaders import split_template_path

from fsbench.config.files import MAX_INPUT_BYTES, read_text_bounded
from fsbench.core.errors import FsbenchError

_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class FolderLoader(jinja2.BaseLoader):
    """Templates from one folder: a name that is not there is TemplateNotFound (fsbench's own serve it);
    a link, a device, a pipe or a file over the bound is an error naming the file and what to do."""

    def __init__(self, folder: Path):
        self.folder = folder

    def get_source(self, environment: jinja2.Environment, template: str) -> tuple[str, str, Callable[[], bool]]:
        parts = split_template_path(template)  # refuses '..'; a leading '/' is dropped: inside the folder
        if not parts:
            raise jinja2.TemplateNotFound(template)
        fd = os.open(self.folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)  # the folder the user named
        try:
            for i, part in enumerate(parts[:-1]):
                try:
                    inner = os.open(part, _FOLDER, dir_fd=fd)
                except OSError as exc:
                    raise _refused(exc, self.folder.joinpath(*parts[:i + 1]), template) from None
                os.close(fd)
                fd = inner
            path = self.folder.joinpath(*parts)
            try:
                text = read_text_bounded(parts[-1], MAX_INPUT_BYTES, dir_fd=fd, follow=False)
            except OSError as exc:
                raise _refused(exc, path, template) from None
        finally:
            os.close(fd)
        return text, str(path), lambda: True


def _refused(exc: OSError, path: Path, template: str) -> Exception:
    """A part that is not there: TemplateNotFound (fsbench's own may serve it); anything else, by name."""
    if exc.errno in (errno.ENOENT, errno.ENOTDIR) and not path.is_symlink():
        return jinja2.TemplateNotFound(template)
    if exc.errno == errno.ELOOP or path.is_symlink():
        return FsbenchError(f"{path}: a symbolic link in a templates folder is refused (a template is read only "
                            "from the folder named, never through a link, which could reach any file): copy the "
                            "file it points to into the folder instead")
    return FsbenchError(f"{path}: not a template file ({exc.strerror or exc}); a templates folder holds plain "
                        "files of text (docs/report.md, Templates): remove it, or name another folder")
