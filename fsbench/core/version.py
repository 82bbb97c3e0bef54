"""fsbench's version and the schema version of the files it writes (manifest.json)."""

__version__ = "0.2.0"
SCHEMA_VERSION = 1
