"""Running a gateway: Prometheus metrics (``metrics``, per deployment in ``deployment_metrics``), readiness
probes (``health``) and the admin API over keys and spend (``admin``)."""
