"""Policy engines: Kyverno (``kyverno``), Rego through rego-cpp (``rego``)."""
