"""Where the tests find the repository and the shared fixtures (read in place, never copied)."""

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
FIXTURES = SHARED / "fixtures"
GOLDEN = Path(__file__).resolve().parent / "golden"
