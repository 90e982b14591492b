#!/usr/bin/env bash
# Evidence for CIS 5.2.8: every pod of namespace network-tools with its spec.
set -euo pipefail
kubectl get pods --namespace network-tools --output json \
  | jq '{pods: [.items[] | {namespace: .metadata.namespace, name: .metadata.name, spec: .spec}]}' \
  > collected_data.json
