"""Base: errors, units, the tidy row, shell quoting, secrets, inventory, statistics; imports no other layer."""
