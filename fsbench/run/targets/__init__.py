"""Systems under test: path safety, setup / teardown, test directories."""
