"""Application definitions: Kubernetes manifests, behaviour sheets, and the alert rules over them."""
