"""The twin's controllers: the behaviour of a cluster derived from its state alone."""
