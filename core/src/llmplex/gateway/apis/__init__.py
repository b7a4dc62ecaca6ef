"""What the three APIs' requests mean beyond their messages: each field's kind, the fit of a call to the provider
it is routed to, token counts. The translations of ``llmplex.gateway`` use these."""
