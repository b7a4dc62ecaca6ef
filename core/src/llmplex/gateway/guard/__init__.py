"""What hostile HTTP meets before it costs anything: the request head's limits and the connection cap (``head``),
the failed-authentication throttle and the per-key in-flight cap (``door``, over ``throttle``)."""
