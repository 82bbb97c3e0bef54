"""Configuration files in general (scenarios, inventories): YAML with line numbers and a declarative checker."""
