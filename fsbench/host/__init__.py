"""What fsbench reads and installs on a host through a transport: facts, packages."""
