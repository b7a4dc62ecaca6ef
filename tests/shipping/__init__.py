"""Issue 30 items 3-5: wheels, the release, the supply chain."""
