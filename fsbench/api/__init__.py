"""The contracts plug-ins and the core meet on: the registry and the transport protocol."""
