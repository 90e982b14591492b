"""The cluster network as a connection from one pod sees it: DNS, Services and Endpoints, NetworkPolicy."""
