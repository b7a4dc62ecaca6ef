"""Issue 25: the call log (llmplex.store), `llmplex logs`, conversations."""
