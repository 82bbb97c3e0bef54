"""S3 through Hadoop's S3A client as a URL target: s3a://BUCKET/path, path-style requests to any endpoint
(the `s3` service's, or a real store's). The keys reach the client only as AWS_ACCESS_KEY_ID and
AWS_SECRET_ACCESS_KEY in its environment (S3A's EnvironmentVariableCredentialsProvider): never in argv,
a configuration file or the run directory. Without keys S3A's default providers apply (an instance role)."""

from __future__ import annotations

from dataclasses import dataclass

from fsbench.api.kinds import KindIssue, KindTarget, TargetKind
from fsbench.api.sections import Section
from fsbench.config import schema as s
from fsbench.config.schema import option
from fsbench.kinds import hadoop_client
from fsbench.validity.namenode import REACHED_S3


@dataclass(frozen=True)
class S3aTarget:
    """Which endpoint and bucket, with which keys, and the client's own settings."""

    endpoint: str = option(s.line_text, "", required=True,
                           doc="the S3 endpoint URL: ${services.s3.endpoint} or https://s3.eu-west-1.amazonaws.com")
    bucket: str = option(s.line_text, "", required=True, doc="the bucket: ${services.s3.bucket} or a name")
    access_key: str = option(s.line_text, "", doc="${services.s3.access_key} or ${secrets.NAME}")
    secret_key: str = option(s.line_text, "", doc="${services.s3.secret_key} or ${secrets.NAME}")
    region: str = option(s.line_text, "us-east-1")
    path_style: bool = option(s.boolean, True, doc="path-style requests (endpoint/bucket/key)")
    properties: dict = hadoop_client.properties_option()
    jars: str = hadoop_client.jars_option()

    def url(self, path: str) -> str:
        return f"s3a://{self.bucket}{path}"

    def client_conf(self, threads: int = 1) -> dict[str, str]:
        conf = {"fs.s3a.endpoint": self.endpoint, "fs.s3a.endpoint.region": self.region,
                "fs.s3a.path.style.access": str(self.path_style).lower(),
                "fs.s3a.connection.ssl.enabled": str(self.endpoint.startswith("https://")).lower(),
                # keep the parent "directory" markers instead of deleting them after every write: what
                # S3A recommends since 3.3.1, and it spares a DeleteObjects request per file
                "fs.s3a.directory.marker.retention": "keep",
                # every thread may hold a connection (NNBench's maps keep their control file open) and
                # want another: a pool smaller than that (96 by default) stalls them for good
                "fs.s3a.connection.maximum": str(max(96, 2 * threads + 16)),
                "fs.s3a.threads.max": str(max(64, threads))}
        if self.access_key:  # only the environment's keys: no instance-metadata probing
            conf["fs.s3a.aws.credentials.provider"] = "com.amazonaws.auth.EnvironmentVariableCredentialsProvider"
        return {**conf, **{str(k): str(v) for k, v in self.properties.items()}}

    def client_env(self) -> dict[str, str]:
        if not self.access_key:
            return {}
        return {"AWS_ACCESS_KEY_ID": self.access_key, "AWS_SECRET_ACCESS_KEY": self.secret_key}


SECTION = Section(S3aTarget, "s3a settings")


class S3aKind(hadoop_client.HadoopUrlKind[S3aTarget]):
    """A folder of an S3 bucket through S3A (no mount)."""

    name = "s3a"
    #: NNBench's operations against the S3 server's own count of their requests (where fsbench runs it)
    validity_checks = (REACHED_S3,)
    section = SECTION

    def texts(self, settings: S3aTarget | None) -> list[tuple[str, str]]:
        spec = settings
        if spec is None:
            return []
        return [("endpoint", spec.endpoint), ("bucket", spec.bucket), ("access_key", spec.access_key),
                ("secret_key", spec.secret_key), ("region", spec.region), ("jars", spec.jars)]

    def check(self, target: KindTarget[S3aTarget]) -> list[KindIssue]:
        spec = target.settings
        if spec is None:
            return [(("kind",), "an s3a target needs an `s3a:` section",
                     "at least `s3a: {endpoint: ${services.s3.endpoint}, bucket: ${services.s3.bucket}}`")]
        out = hadoop_client.path_issues(target, self.name, "bucket: ${services.s3.bucket}")
        if bool(spec.access_key) != bool(spec.secret_key):
            out.append((("s3a", "secret_key" if spec.access_key else "access_key"),
                        "give both keys or neither", "both: ${services.s3.access_key} and ${services.s3.secret_key}"))
        for key, value in (("access_key", spec.access_key), ("secret_key", spec.secret_key)):
            if value and "${" not in value:
                out.append((("s3a", key), f"a key written in the scenario ({key})",
                            "keys are references: ${secrets.NAME} (an environment variable or a file) or "
                            f"${{services.s3.{key}}}"))
        return out


PLUGIN: TargetKind[S3aTarget] = S3aKind()
