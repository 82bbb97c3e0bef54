"""The run pipeline: the case loop, one case, preflight, deploy, records, leftovers, target sessions."""
